"""One big-ish array (fuses) next to tiny ones (may stay NumPy), sharing scalars across them."""
import numpy as np

big = np.linspace(0, 10, 50_000)
small = np.array([1.0, 2.0, 3.0])
scale = small.sum()
y = np.sin(big) * scale + np.cos(big) / scale
m = y.mean()
z = (y - m) ** 2
var = z.sum() / (z.size - 1)
small2 = small * var
sel = y[::5000]
norm = np.sqrt((y * y).sum())
