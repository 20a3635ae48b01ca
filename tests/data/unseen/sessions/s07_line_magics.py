# %%
import numpy as np
x = np.random.default_rng(7).normal(size=1000)
# %% fuse
%time y = np.sort(x) ** 2
%timeit -n 1 -r 1 x.std()
z = y.cumsum()
m = z[-1] / len(z)
# %%
print(m.round(8), z.shape)
