"""A class holding arrays, updating them in place in methods, with properties computing arrays."""
import numpy as np

class Body:
    def __init__(self, n):
        self.pos = np.zeros((n, 2))
        self.vel = np.column_stack([np.linspace(1, 2, n), np.zeros(n)])
        self.mass = np.arange(1.0, n + 1)

    @property
    def momentum(self):
        return self.vel * self.mass[:, None]

    @property
    def kinetic(self):
        return 0.5 * (self.mass * (self.vel ** 2).sum(axis=1)).sum()

    def step(self, dt, g=-9.8):
        self.vel[:, 1] += g * dt
        self.pos += self.vel * dt
        hit = self.pos[:, 1] < -1
        self.vel[hit, 1] *= -0.8
        self.pos[hit, 1] = -1

b = Body(4)
for _ in range(10):
    b.step(0.05)
p = b.momentum
e = b.kinetic
snap = b.pos.copy()
