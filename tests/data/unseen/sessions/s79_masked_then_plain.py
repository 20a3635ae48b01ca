# %%
import numpy as np
raw = np.array([1.0, -99.0, 3.0, 4.0, -99.0, 6.0])
# %% fuse
m = np.ma.masked_values(raw, -99.0)
m2 = (m - m.mean()) / m.std()
cleaned = m2.filled(0.0)
n_bad = int(m.mask.sum())
# %%
print(type(m2).__name__, m2.mask, cleaned, n_bad)
m2[0] = np.ma.masked
print(m2.count())
