# %%
import numpy as np
grid = np.zeros((6, 6))
inner = grid[1:-1, 1:-1]
edge = grid[0]
# %% fuse
inner += 1.0
inner[::2, ::2] *= 3
edge[:] = np.arange(6.0)
total = grid.sum()
# %%
print(grid[:3], inner.base is grid, total)
