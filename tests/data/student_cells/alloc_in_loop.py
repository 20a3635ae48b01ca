# stresses: allocating a fresh array in every iteration (np.empty, fill, accumulate):
# one base per iteration.
# small: STEPS=100
import numpy as np

STEPS = 20_000
acc = np.zeros(64)
for i in range(STEPS):
    tmp = np.empty(64)
    tmp[:] = i % 10
    acc += tmp * 0.001
