# %%
import numpy as np
# %% fuse
a = np.arange(4.0) * 2
ragged = np.empty(3, dtype=object)
ragged[0] = a
ragged[1] = a[:2] + 1
ragged[2] = [a.sum(), 5]
lens = np.array([len(r) for r in ragged])
objs = np.array([a, a * 3], dtype=object)
# %%
print(ragged, lens, objs.shape, objs.dtype, type(ragged[0]).__name__, type(objs[1]).__name__)
ragged[0] += 1
print(a)
