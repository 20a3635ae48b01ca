# stresses: iterating over an array's elements in Python (`for v in x`), a Python sum.
# small: N=50
import numpy as np

N = 20_000
x = np.linspace(0.0, 1.0, N)
total = 0.0
for v in x:
    total += v * v
