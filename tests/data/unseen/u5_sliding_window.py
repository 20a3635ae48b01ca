"""Rolling statistics with sliding_window_view and as_strided (read-only windows)."""
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view, as_strided

x = np.sin(np.linspace(0, 10, 50)) + np.linspace(0, 1, 50)
w = sliding_window_view(x, 5)
roll_mean = w.mean(axis=-1)
roll_max = w.max(axis=-1)
roll_std = w.std(axis=-1)
z = (x[2:-2] - roll_mean) / (roll_std + 1e-9)
img = np.arange(36.0).reshape(6, 6)
pat = sliding_window_view(img, (3, 3))
box = pat.sum(axis=(-1, -2)) / 9
s = x.strides[0]
pairs = as_strided(x, shape=(len(x) - 1, 2), strides=(s, s), writeable=False)
slope = pairs[:, 1] - pairs[:, 0]
try:
    w[0, 0] = 5.0
    err = None
except ValueError as exc:
    err = type(exc).__name__
