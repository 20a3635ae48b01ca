"""Mirroring a matrix by copying each row into its column in a loop (a[:, i] = a[i]), as a student would, and the transpose through x.T[i] = x[i]."""
import numpy as np

n = 5
a = np.arange(n * n, dtype=float).reshape(n, n)
for i in range(n):
    a[:, i] = a[i]
sym = np.allclose(a, a.T)
b = np.zeros((n, n))
b[1] = np.linspace(1, 2, n)
b.T[n - 1] = b[1]
c = np.arange(16.0).reshape(4, 4)
c[1:, 0] = c[0, :3]
d = np.arange(12.0).reshape(3, 4)
d[:, 3] = d[2, 1:]
total = a.sum() + b.sum() + c.sum() + d.sum()
