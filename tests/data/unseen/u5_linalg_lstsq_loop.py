"""Iteratively reweighted least squares: lstsq, pinv, det and inv in a loop mixed with element-wise weights."""
import numpy as np

t = np.linspace(0, 1, 20)
y = 2 * t + 1 + 0.05 * np.sin(40 * t)
y[[3, 11]] += 3.0
A = np.column_stack([t, np.ones_like(t)])
w = np.ones_like(t)
for _ in range(8):
    W = np.sqrt(w)[:, None]
    coef, *_ = np.linalg.lstsq(A * W, y * W[:, 0], rcond=None)
    r = y - A @ coef
    w = 1.0 / np.maximum(np.abs(r), 1e-3)
P = np.linalg.pinv(A)
d = np.linalg.det(A.T @ A)
Ainv = np.linalg.inv(A.T @ A + np.eye(2))
cond = np.linalg.cond(A)
