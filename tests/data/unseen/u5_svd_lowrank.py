"""Low-rank approximation with SVD, QR orthogonalisation, matrix_power and a Vandermonde fit."""
import numpy as np

rng = np.random.default_rng(11)
X = rng.standard_normal((12, 8))
U, S, Vt = np.linalg.svd(X, full_matrices=False)
k = 3
Xk = (U[:, :k] * S[:k]) @ Vt[:k]
err = np.linalg.norm(X - Xk) / np.linalg.norm(X)
Q, R = np.linalg.qr(X)
ortho = np.abs(Q.T @ Q - np.eye(8)).max()
P = np.array([[0.9, 0.1], [0.4, 0.6]])
P10 = np.linalg.matrix_power(P, 10)
t = np.linspace(0, 1, 9)
V = np.vander(t, 4)
coef = np.linalg.solve(V.T @ V, V.T @ np.cos(3 * t))
fit = V @ coef
resid = np.cos(3 * t) - fit
