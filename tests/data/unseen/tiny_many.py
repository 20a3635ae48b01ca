"""Very many iterations of tiny ops on 3-element arrays (a particle bouncing in a box)."""
import numpy as np

pos = np.array([0.1, 0.5, 0.9])
vel = np.array([0.013, -0.007, 0.021])
lo, hi = 0.0, 1.0
bounces = 0
for step in range(10000):
    pos = pos + vel
    out = (pos < lo) | (pos > hi)
    if out.any():
        vel[out] *= -1
        pos = np.clip(pos, lo, hi)
        bounces += 1
energy = 0.5 * (vel ** 2).sum()
