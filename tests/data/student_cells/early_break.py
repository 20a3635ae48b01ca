# stresses: a long loop with a data-dependent `break` (an `if` on an element each
# iteration: a batch per iteration).
# small: GROWTH=1.5
import numpy as np

GROWTH = 1.0005
x = np.ones(100)
steps = 0
for i in range(100_000):
    x = x * GROWTH
    steps = i
    if x[0] > 100.0:
        break
