# %%
import numpy as np
from dataclasses import dataclass, field

@dataclass
class Particles:
    pos: np.ndarray
    vel: np.ndarray
    trail: list = field(default_factory=list)

    def step(self, dt):
        self.pos = self.pos + dt * self.vel
        self.vel *= 0.9
        self.trail.append(self.pos[0].copy())
# %% fuse
p = Particles(np.zeros((5, 2)), np.ones((5, 2)) * np.arange(5.0)[:, None])
for _ in range(4):
    p.step(0.1)
energy = 0.5 * (p.vel ** 2).sum()
# %%
p.step(0.1)
print(energy, p.pos[-1], len(p.trail))
