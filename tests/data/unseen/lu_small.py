"""LU without pivoting on a small matrix, rows updated by views; then solve."""
import numpy as np

n = 10
A = np.fromfunction(lambda i, j: 1.0 / (i + j + 1), (n, n)) + np.eye(n) * n
LU = A.copy()
for k in range(n - 1):
    LU[k + 1:, k] /= LU[k, k]
    LU[k + 1:, k + 1:] -= np.outer(LU[k + 1:, k], LU[k, k + 1:])
L = np.tril(LU, -1) + np.eye(n)
U = np.triu(LU)
err = np.abs(L @ U - A).max()
b = np.ones(n)
sol = np.linalg.solve(A, b)
