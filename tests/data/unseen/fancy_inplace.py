"""Fancy-index in-place updates: repeated indices apply once, masked +=, slices overlapping, sort in place."""
import numpy as np

x = np.zeros(8)
x[[0, 0, 1, 3, 3, 3]] += 1
y = np.arange(10.0)
y[y > 4] += 100
y[::2] += y[1::2]
z = np.arange(12.0).reshape(3, 4)
z[[0, 2]] *= -1
z[:, [1, 3]] += z[:, [0, 2]]
w = np.array([3.0, 1.0, 2.0, 5.0, 4.0])
w.sort()
v = np.arange(10.0)[::-1].copy()
v[2:7].sort()
a = np.arange(6.0)
a[1:] += a[:-1]
b = np.arange(6.0)
b[:-1] -= b[1:]
