"""A while loop whose condition reads an array value (Jacobi iteration for Ax=b)."""
import numpy as np

n = 8
A = np.eye(n) * 4 + np.eye(n, k=1) * -1 + np.eye(n, k=-1) * -1
b = np.ones(n)
x = np.zeros(n)
D = np.diag(A)
R = A - np.diagflat(D)
it = 0
err = 1.0
while err > 1e-10 and it < 200:
    x_new = (b - R @ x) / D
    err = np.abs(x_new - x).max()
    x = x_new
    it += 1
res = np.linalg.norm(A @ x - b)
