# %%
import numpy as np
# %% fuse
m = np.arange(6.0).reshape(2, 3)
m.mean(axis=0) * 2
# %%
prev = _
print(type(prev).__name__, prev)
%who
# %% fuse
z = m.T @ m
z.trace(), z.shape
# %%
got = _
print(got)
