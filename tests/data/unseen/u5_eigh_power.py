"""Symmetric eigenproblem checked against power iteration done element-wise."""
import numpy as np

n = 6
i, j = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
A = 1.0 / (1.0 + np.abs(i - j)) + np.diag(np.arange(n, dtype=float))
w, V = np.linalg.eigh(A)
v = np.ones(n) / np.sqrt(n)
for _ in range(60):
    v = A @ v
    v /= np.linalg.norm(v)
lam = v @ A @ v
gap = abs(lam - w[-1])
align = abs(v @ V[:, -1])
recon = (V * w) @ V.T
assert np.allclose(recon, A)
