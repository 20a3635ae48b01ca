# %%
import numpy as np
x = np.linspace(0, 1, 7) / 3
# %% fuse
np.set_printoptions(precision=2, floatmode="fixed")
y = x * 10
print(y)
s = np.array2string(y, separator=";")
print(f"{y.sum():.3f} {y[:2]}")
# %%
print(y, s)
np.set_printoptions(precision=8, floatmode="maxprec")
print(x)
