# %%
import numpy as np
m = np.ma.array([1.0, 2.0, 3.0, 4.0], mask=[0, 1, 0, 0])
rec = np.rec.fromarrays([np.arange(3.0), np.ones(3)], names="a,b")
# %% fuse
m *= 2
m[0] = np.ma.masked
rec.a += 10
rec["b"][1] = -1
s = m.sum() + rec.a.sum()
# %%
print(m, m.mask, rec, s, type(m).__name__, type(rec).__name__)
