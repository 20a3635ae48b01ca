# stresses: a cell that raises half way through a long loop (the variables assigned before
# the error stay, as in a plain cell).
# small: STEPS=200
import numpy as np

STEPS = 20_000
x = np.zeros(100)
for i in range(STEPS):
    x = x + 0.5
    if i == STEPS // 2:
        raise ValueError(f"diverged at step {i}")
never = 1
