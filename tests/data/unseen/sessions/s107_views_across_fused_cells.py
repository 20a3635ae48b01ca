# %%
import numpy as np
# %% fuse
a = np.arange(10.0)
v = a[::2]
t = a.reshape(2, 5).T
# %% fuse
v *= 2
t[0] = -1
s = a.sum()
# %%
print(a, v, t.base is not None, s, np.shares_memory(v, a))
