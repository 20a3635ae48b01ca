# %%
import numpy as np
np.set_printoptions(precision=4)
# %% fuse
x = np.linspace(0, 1, 4) ** 3
print(x)
print(repr(x * 2))
print(f"sum={x.sum():.5f}", x.dtype, x.shape)
print(np.array2string(x, separator=", ", suppress_small=True))
s = str(x[1:]) + "|" + repr(x[0])
print(x.mean(), x.max() * 2, x.tolist())
# %%
print(s)
np.set_printoptions(precision=8)
