"""Game of Life on a torus: int8 grid, np.roll neighbour sums, bool rules, population history."""
import numpy as np

rng = np.random.default_rng(5)
grid = (rng.random((12, 12)) < 0.35).astype(np.int8)
history = []
for gen in range(8):
    nb = sum(np.roll(np.roll(grid, dy, 0), dx, 1) for dy in (-1, 0, 1) for dx in (-1, 0, 1)
             if (dy, dx) != (0, 0))
    alive = grid.astype(bool)
    grid = ((nb == 3) | (alive & (nb == 2))).astype(np.int8)
    history.append(int(grid.sum()))
final = grid.copy()
density = grid.mean()
