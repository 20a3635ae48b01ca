# A particle system kept in a dataclass whose methods update array fields in place or replace
# them, dataclasses.replace for a snapshot, and a list of snapshots kept for later cells
import dataclasses
import numpy as np


@dataclasses.dataclass
class Particles:
    x: np.ndarray
    v: np.ndarray
    m: float = 1.0

    def kick(self, f, dt):
        self.v += f / self.m * dt

    def drift(self, dt):
        self.x = self.x + self.v * dt

    def energy(self):
        return 0.5 * self.m * float((self.v ** 2).sum())


rng = np.random.default_rng(3)
p = Particles(rng.random((500, 3)), np.zeros((500, 3)), m=2.0)
snaps = []
for step in range(40):
    f = -(p.x - 0.5) * 4.0
    p.kick(f, 0.01)
    p.drift(0.01)
    if step % 10 == 0:
        snaps.append(dataclasses.replace(p, x=p.x.copy(), v=p.v.copy()))
e = p.energy()
centre = p.x.mean(axis=0)
first = snaps[0].x[:3]
