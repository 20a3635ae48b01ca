"""Forward substitution (trisolv) and back substitution with Python loops over rows."""
import numpy as np

n = 24
L = np.tril(np.fromfunction(lambda i, j: (i + n - j + 1) * 2.0 / n, (n, n)))
b = np.arange(n, dtype=float)
x = np.empty(n)
for i in range(n):
    x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]
U = L.T.copy()
y = np.zeros_like(b)
for i in range(n - 1, -1, -1):
    y[i] = (b[i] - np.dot(U[i, i + 1:], y[i + 1:])) / U[i, i]
residual = np.linalg.norm(L @ x - b) + np.linalg.norm(U @ y - b)
