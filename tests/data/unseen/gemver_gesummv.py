"""PolyBench gemver and gesummv with outer products and alpha/beta scalars."""
import numpy as np

n = 40
alpha, beta = 1.5, 1.2
fn = float(n)
idx = np.arange(n, dtype=np.float64)
A = np.fromfunction(lambda i, j: (i * j % n) / n, (n, n))
u1 = idx; u2 = ((idx + 1) / fn) / 2.0
v1 = ((idx + 1) / fn) / 4.0; v2 = ((idx + 1) / fn) / 6.0
y = ((idx + 1) / fn) / 8.0; z = ((idx + 1) / fn) / 9.0
x = np.zeros(n); w = np.zeros(n)
A += np.outer(u1, v1) + np.outer(u2, v2)
x += beta * y @ A + z
w += alpha * A @ x
B = np.fromfunction(lambda i, j: ((i * j + 2) % n) / n, (n, n))
tmp = A @ x
y2 = alpha * tmp + beta * (B @ x)
