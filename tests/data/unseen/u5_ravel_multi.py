"""Flat indices: ravel_multi_index, unravel_index, np.ndindex, diag_indices, fill_diagonal."""
import numpy as np

shape = (5, 6)
rows = np.array([0, 1, 4, 2])
cols = np.array([5, 0, 3, 3])
flat = np.ravel_multi_index((rows, cols), shape)
grid = np.zeros(shape)
grid.flat[flat] = np.arange(1.0, 5.0)
r2, c2 = np.unravel_index(np.argmax(grid * (grid < 4)), shape)
acc = 0.0
for i, j in np.ndindex(2, 3):
    acc += grid[i, j] * (i + 1) + j
sq = np.ones((4, 4)) * 2
di = np.diag_indices(4)
sq[di] = np.arange(4.0)
np.fill_diagonal(sq[:, ::-1], -1.0)
tri = np.tri(4, k=-1) * sq
