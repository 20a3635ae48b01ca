"""Mandelbrot as a class exercise writes it: a mask of the bounded points updates only them."""
import numpy as np

xs = np.linspace(-2.0, 0.6, 150, dtype=np.float32)
ys = np.linspace(-1.2, 1.2, 120, dtype=np.float32)
grid = (xs[None, :] + 1j * ys[:, None]).astype(np.complex64)
z = np.zeros_like(grid)
count = np.zeros(grid.shape, dtype=np.int32)
for k in range(30):
    bounded = np.abs(z) < 2.0
    count[bounded] = k
    z[bounded] = z[bounded] ** 2 + grid[bounded]
count[count == 29] = 0
share_escaped = float((count > 0).mean())
edge = np.count_nonzero((count > 5) & (count < 20))
