"""Self-overlapping in-place updates: shifted slices, reversed assignment, x[1:] += x[:-1] (NumPy buffers)."""
import numpy as np

x = np.arange(10.0)
x[1:] += x[:-1]
y = np.arange(10.0)
y[:-1] = y[1:] * 2
z = np.arange(10.0)
z[::-1] = z
w = np.arange(12.0).reshape(3, 4)
w[:, 1:] -= w[:, :-1]
v = np.arange(8.0)
v[2:] = v[:-2] + v[2:]
u = np.arange(6.0)
np.add(u[:-1], u[1:], out=u[1:])
