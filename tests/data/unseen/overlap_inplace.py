"""Overlapping in-place updates NumPy buffers: shifts, reversals, a += a.T."""
import numpy as np

a = np.arange(10.0)
a[1:] = a[:-1]
b = np.arange(10.0)
b[:-1] += b[1:]
c = np.arange(8.0)
c[:] = c[::-1]
m = np.arange(16.0).reshape(4, 4)
m += m.T
s = np.arange(6.0)
s[2:] = s[:4] * 2 + s[2:]
w = np.arange(12.0).reshape(3, 4)
w[:, 1:] -= w[:, :-1]
