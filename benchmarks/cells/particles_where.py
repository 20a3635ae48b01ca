# A student's particles in a box: positions advance, walls reflect them with np.where.
import numpy as np

N = 200_000
x = np.linspace(0.0, 1.0, N)
v = np.cos(np.arange(N) * 0.37) * 0.05
for t in range(5):
    x = x + v
    v = np.where((x < 0.0) | (x > 1.0), -v, v)
    x = np.clip(x, 0.0, 1.0)
kinetic = 0.5 * (v ** 2).sum()
