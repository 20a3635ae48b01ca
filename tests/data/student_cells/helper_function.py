# stresses: a loop calling a helper function with np.roll (a stencil with copies),
# 2,000 steps.
# small: N=100 STEPS=60
import numpy as np

N = 1_000
STEPS = 2_000


def laplacian(v):
    return np.roll(v, 1) - 2.0 * v + np.roll(v, -1)


u = np.exp(-np.linspace(-3.0, 3.0, N) ** 2)
for _ in range(STEPS):
    u = u + 0.1 * laplacian(u)
