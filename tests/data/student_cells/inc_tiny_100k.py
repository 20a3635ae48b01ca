# stresses: the capture budget and everything after it: 100,000 tiny in-place updates
# (each iteration reads what the one before wrote: rerolling must refuse, fast).
# small: STEPS=3000
import numpy as np

STEPS = 100_000
x = np.zeros(10)
for i in range(STEPS):
    x += 1.0
