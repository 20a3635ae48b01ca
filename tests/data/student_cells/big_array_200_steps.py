# stresses: a 10^7-element array and 200 steps (each operation itself takes ~10 ms: capture
# stops on time; memory of the recorded temporaries).
# small: N=2_000 STEPS=20
import numpy as np

N = 10_000_000
STEPS = 200
u = np.ones(N)
for _ in range(STEPS):
    u = 0.5 * u + 0.25
mean = u.mean()
