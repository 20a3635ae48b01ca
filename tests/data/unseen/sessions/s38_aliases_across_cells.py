# %%
import numpy as np
a = np.arange(6.0)
b = a
c = a[::2]
rows = [a, a[1:3]]
# %% fuse
b += 10
c *= -1
rows[1][:] = 0.5
d = a + b
# %% fuse
b += 10
e = c.sum() + rows[0][-1]
# %%
print(a, b is a, c, d, e)
