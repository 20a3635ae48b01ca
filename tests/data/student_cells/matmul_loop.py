# stresses: matrix products in a loop (power iteration, CONTRACT instructions), a norm each
# step.
# small: N=8 STEPS=10
import numpy as np

N = 200
STEPS = 500
rng = np.random.default_rng(3)
A = rng.random((N, N))
A = A + A.T
v = np.ones(N)
for _ in range(STEPS):
    w = A @ v
    v = w / np.linalg.norm(w)
eigenvalue = float(v @ A @ v)
