"""A Julia set in float32 real and imaginary parts, the points that escape dropped each step."""
import numpy as np

n = 20000
rng = np.random.default_rng(7)
x = rng.uniform(-1.6, 1.6, n).astype(np.float32)
y = rng.uniform(-1.0, 1.0, n).astype(np.float32)
idx = np.arange(n)
steps_taken = np.zeros(n, dtype=np.int16)
cx, cy = np.float32(-0.8), np.float32(0.156)
for k in range(12):
    x, y = x * x - y * y + cx, np.float32(2.0) * x * y + cy
    alive = x * x + y * y <= np.float32(4.0)
    steps_taken[idx[~alive]] = k
    x, y, idx = x[alive], y[alive], idx[alive]
survivors = idx.size
histogram = np.bincount(steps_taken, minlength=12)
