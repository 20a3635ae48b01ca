# stresses: Gauss-Seidel sweeps with scalar indexing in nested loops (each element reads
# the ones just written).
# small: N=6 SWEEPS=2
import numpy as np

N = 40
SWEEPS = 20
u = np.zeros((N, N))
u[0, :] = 1.0
for sweep in range(SWEEPS):
    for i in range(1, N - 1):
        for j in range(1, N - 1):
            u[i, j] = 0.25 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1])
