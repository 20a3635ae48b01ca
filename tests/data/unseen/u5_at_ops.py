"""Scatter updates: subtract.at, multiply.at, maximum.at and minimum.at with repeated indices."""
import numpy as np

n = 6
a = np.full(n, 10.0)
idx = np.array([0, 2, 2, 5, 5, 5])
np.subtract.at(a, idx, np.array([1.0, 2.0, 3.0, 0.5, 0.5, 0.5]))
b = np.ones(n)
np.multiply.at(b, idx, 2.0)
hi = np.full(n, -np.inf)
np.maximum.at(hi, idx, np.arange(6.0))
lo = np.zeros((3, 3))
np.minimum.at(lo, (np.array([0, 1, 1]), np.array([2, 0, 0])), np.array([-1.0, -2.0, -0.5]))
i = np.zeros(4, dtype=np.int64)
np.add.at(i, [0, 0, 3], [5, 6, 7])
mix = a * b + np.where(np.isfinite(hi), hi, 0)
