# %%
import numpy as np
from dataclasses import dataclass, field

@dataclass
class Grid:
    n: int
    h: float = 0.1
    u: np.ndarray = field(default_factory=lambda: np.zeros(4))

    def __post_init__(self):
        self.x = np.arange(self.n) * self.h
        self.u = np.resize(self.u, self.n)

    @property
    def energy(self):
        return 0.5 * self.h * (self.u ** 2).sum()

    @classmethod
    def bump(cls, n):
        g = cls(n)
        g.u = np.exp(-((g.x - g.x.mean()) ** 2) / 0.01)
        return g

    @staticmethod
    def laplacian(v, h):
        out = np.zeros_like(v)
        out[1:-1] = (v[2:] - 2 * v[1:-1] + v[:-2]) / h ** 2
        return out
# %% fuse
g = Grid.bump(12)
lap = Grid.laplacian(g.u, g.h)
g.u = g.u + 1e-4 * lap
e = g.energy
z = Grid(5)
# %%
print(round(float(e), 12), z.u, g.x[-1])
