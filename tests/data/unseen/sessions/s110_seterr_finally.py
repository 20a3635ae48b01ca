# %%
import numpy as np
old = np.geterr()
# %% fuse
x = np.array([1.0, 0.0, -1.0])
prev = np.seterr(divide="raise")
try:
    y = 1.0 / x
except FloatingPointError as e:
    msg = str(e)
    y = np.zeros_like(x)
finally:
    np.seterr(**prev)
z = 1.0 / (x + 2)
# %%
print(msg, y, z, np.geterr() == old)
