"""Small linear algebra in a notebook: solve, lstsq, eig of symmetric, norms, det, inverse check."""
import numpy as np

rng = np.random.default_rng(9)
A = rng.normal(size=(5, 5))
S = A @ A.T + 5 * np.eye(5)
b = rng.normal(size=5)
x = np.linalg.solve(S, b)
res = np.linalg.norm(S @ x - b)
w, V = np.linalg.eigh(S)
recon = (V * w) @ V.T
det = np.linalg.det(S)
Ainv = np.linalg.inv(S)
ident = np.abs(Ainv @ S - np.eye(5)).max() < 1e-10
Xd = np.column_stack([np.ones(10), np.arange(10.0)])
yd = 2 + 3 * np.arange(10.0) + rng.normal(scale=0.1, size=10)
coef, *_ = np.linalg.lstsq(Xd, yd, rcond=None)
fro = np.linalg.norm(A, "fro")
chol = np.linalg.cholesky(S)
