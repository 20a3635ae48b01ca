# stresses: nested loops over rows and columns writing one element at a time
# (`a[i, j] = ...`): one 0-d instruction per element.
# small: N=12
import numpy as np

N = 150
a = np.zeros((N, N))
for i in range(N):
    for j in range(N):
        a[i, j] = (i + 1) * 0.5 + j * j
trace = np.trace(a)
