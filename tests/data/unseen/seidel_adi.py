"""Seidel-2d with in-place loops and an ADI-like sweep over columns."""
import numpy as np

n, tsteps = 12, 3
A = np.fromfunction(lambda i, j: (i * (j + 2) + 2) / n, (n, n))
for t in range(tsteps):
    for i in range(1, n - 1):
        A[i, 1:-1] += (A[i - 1, :-2] + A[i - 1, 1:-1] + A[i - 1, 2:] + A[i, 2:]
                       + A[i + 1, :-2] + A[i + 1, 1:-1] + A[i + 1, 2:])
        for j in range(1, n - 1):
            A[i, j] = (A[i, j] + A[i, j - 1]) / 9.0
u = np.ones((n, n))
v = np.zeros((n, n))
for t in range(2):
    v[0, :] = 1.0
    v[1:-1, :] = 0.5 * (u[:-2, :] + u[2:, :])
    v[-1, :] = 1.0
    u[:, 1:-1] = 0.25 * (v[:, :-2] + 2 * v[:, 1:-1] + v[:, 2:])
total = A.sum() + u.sum()
