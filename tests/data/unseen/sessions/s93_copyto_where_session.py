# %%
import numpy as np
base = np.zeros((3, 3))
mask = np.eye(3, dtype=bool)
# %% fuse
src = np.arange(9.0).reshape(3, 3) + 1
np.copyto(base, src, where=~mask)
np.place(src, mask, [-1, -2, -3])
np.putmask(base, base > 5, base * 10)
flat_idx = np.flatnonzero(base)
# %%
print(base, src, flat_idx)
