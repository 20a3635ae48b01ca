# stresses: scans in a loop (cumsum then diff: prefix sums and shifted differences each
# step).
# small: N=100 STEPS=20
import numpy as np

N = 50_000
STEPS = 300
x = np.random.default_rng(4).random(N)
for _ in range(STEPS):
    c = np.cumsum(x)
    x = np.diff(c, prepend=0.0) * 0.999 + 0.001
result = float(x.max())
