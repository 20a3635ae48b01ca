"""Python loops over rows and ndenumerate, with arrays mutated as iterated; zip over two arrays."""
import numpy as np

grid = np.arange(12.0).reshape(3, 4)
for row in grid:
    row -= row.mean()
for i, row in enumerate(grid.T):
    row *= i + 1
acc = np.zeros(4)
for r, w in zip(grid, [0.5, 1.0, 2.0]):
    acc += r * w
total = 0.0
for (i, j), v in np.ndenumerate(grid[:2, :2]):
    total += v * (i - j)
cols = [c.copy() for c in grid.T if c.sum() > -100]
stacked = np.stack(cols, axis=1)
