# stresses: an explicit 1-D heat equation, in-place slice updates of a medium array,
# 3,000 steps (4 instructions a step: past the instruction cap).
# small: N=200 STEPS=150
import numpy as np

N = 2_000
STEPS = 3_000
u = np.zeros(N)
u[N // 2] = 1.0
alpha = 0.25
for _ in range(STEPS):
    u[1:-1] = u[1:-1] + alpha * (u[2:] - 2 * u[1:-1] + u[:-2])
