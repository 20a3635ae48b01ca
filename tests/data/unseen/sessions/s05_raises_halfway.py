# %%
import numpy as np
a = np.arange(12.0)
log = []
# %% fuse
a *= 2
log.append(a.sum())
b = a.reshape(3, 4)
c = b.T @ np.ones(3)
d = a.reshape(5, 3)
e = d + 1
# %%
print(a[:4], len(log), c)
