"""Particles binned into grid cells by index arrays computed from float32 positions."""
import numpy as np

rng = np.random.default_rng(3)
pos = rng.random((5000, 2), dtype=np.float32)
vel = (rng.random((5000, 2), dtype=np.float32) - np.float32(0.5)) * np.float32(0.02)
cells = 32
density = np.zeros((cells, cells), dtype=np.int64)
heat = np.zeros((cells, cells), dtype=np.float32)
for step in range(8):
    pos = pos + vel
    inside = np.all((pos >= 0) & (pos < 1), axis=1)
    pos, vel = pos[inside], vel[inside]
    ij = np.minimum((pos * cells).astype(np.int64), cells - 1)
    np.add.at(density, (ij[:, 0], ij[:, 1]), 1)
    speed = np.sqrt((vel * vel).sum(axis=1))
    heat[ij[:, 0], ij[:, 1]] = speed
    flat = ij[:, 0] * cells + ij[:, 1]
    picked = density.ravel()[flat]
occupied = int((density > 0).sum())
busiest = int(picked.max())
