"""PolyBench atax and bicg: matrix-vector products with @ and np.dot."""
import numpy as np

M, N = 38, 42
fn = np.float64(N)
i = np.arange(M)[:, None]
j = np.arange(N)[None, :]
A = ((i + j) % N) / (5.0 * M)
x = 1.0 + np.arange(N) / fn
y_atax = A.T @ (A @ x)
p = np.arange(N) % N / N
r = np.arange(M) % M / M
s = np.dot(r, A)
q = np.dot(A, p)
summary = f"{y_atax.sum():.6f} {s.mean():.6f} {q.max():.6f}"
