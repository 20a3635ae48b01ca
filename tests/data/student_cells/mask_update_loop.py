# stresses: boolean-mask updates in a loop (`x[x > t] *= ...`: filters and masked
# assignments every iteration).
# small: N=100 STEPS=20
import numpy as np

N = 10_000
STEPS = 1_000
x = np.linspace(0.0, 2.0, N)
for _ in range(STEPS):
    x[x > 1.0] *= 0.9
    x += 0.001
