# stresses: a student's LU factorisation: row operations in nested Python loops (rerolled
# per pivot), 80 x 80.
# small: N=8
import numpy as np

N = 80
rng = np.random.default_rng(1)
A = rng.random((N, N)) + N * np.eye(N)
U = A.copy()
L = np.eye(N)
for k in range(N - 1):
    for i in range(k + 1, N):
        L[i, k] = U[i, k] / U[k, k]
        U[i, k:] -= L[i, k] * U[k, k:]
residual = np.abs(L @ U - A).max()
