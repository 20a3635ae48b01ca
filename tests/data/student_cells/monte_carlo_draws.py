# stresses: many tiny random draws in a loop, a Python comparison of each (a batch and a
# RANDOM instruction per draw).
# small: DRAWS=200
import numpy as np

DRAWS = 20_000
rng = np.random.default_rng(0)
hits = 0
for _ in range(DRAWS):
    p = rng.random(2)
    if (p ** 2).sum() < 1.0:
        hits += 1
pi_estimate = 4.0 * hits / DRAWS
