"""Conjugate gradient and power iteration with np.linalg.norm, dot and a tolerance loop."""
import numpy as np

n = 12
A = np.diag(np.full(n, 4.0)) + np.diag(np.full(n - 1, -1.0), 1) + np.diag(np.full(n - 1, -1.0), -1)
b = np.arange(1.0, n + 1)
x = np.zeros(n)
r = b - A @ x
p = r.copy()
rs = r.dot(r)
for k in range(50):
    Ap = A.dot(p)
    alpha = rs / p.dot(Ap)
    x += alpha * p
    r -= alpha * Ap
    rs_new = r @ r
    if np.sqrt(rs_new) < 1e-10:
        break
    p = r + (rs_new / rs) * p
    rs = rs_new
iters = k
resid = np.linalg.norm(A @ x - b)
v = np.ones(n) / np.sqrt(n)
lam = 0.0
for _ in range(200):
    w = A @ v
    lam_new = v @ w
    v = w / np.linalg.norm(w)
    if abs(lam_new - lam) < 1e-12:
        break
    lam = lam_new
