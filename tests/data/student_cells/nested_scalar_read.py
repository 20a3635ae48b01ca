# stresses: nested loops reading one element at a time into a Python float
# (each read syncs: a batch per element).
# small: N=10
import numpy as np

N = 120
a = np.arange(N * N, dtype=float).reshape(N, N) / N
s = 0.0
for i in range(N):
    for j in range(N):
        s += a[i, j] * (i - j)
