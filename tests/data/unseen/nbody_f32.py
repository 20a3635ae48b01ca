"""A small float32 n-body step with pairwise differences and softening."""
import numpy as np

rng = np.random.default_rng(9)
n = 16
pos = rng.random((n, 3)).astype(np.float32)
vel = np.zeros((n, 3), dtype=np.float32)
mass = rng.random(n).astype(np.float32) + 0.5
dt = 0.01
for step in range(3):
    dx = pos[None, :, :] - pos[:, None, :]
    r2 = (dx ** 2).sum(-1) + 0.01
    inv = r2 ** -1.5
    acc = (dx * (inv * mass[None, :])[:, :, None]).sum(1)
    vel += acc * dt
    pos += vel * dt
ke = 0.5 * (mass * (vel ** 2).sum(1)).sum()
