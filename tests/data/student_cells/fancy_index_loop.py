# stresses: integer-array indexing with `+=` in a loop (random indices each iteration:
# gathers and scatters).
# small: STEPS=30
import numpy as np

STEPS = 3_000
rng = np.random.default_rng(2)
counts = np.zeros(100)
for _ in range(STEPS):
    idx = rng.integers(0, 100, size=10)
    counts[idx] += 1.0
