# stresses: reductions whose results feed the next step (mean, std each iteration) without
# leaving NumPy: long dependent chains.
# small: STEPS=50
import numpy as np

STEPS = 4_000
x = np.sin(np.arange(1000.0))
for _ in range(STEPS):
    m = x.mean()
    s = x.std()
    x = (x - m) / s + 0.01 * x * x
