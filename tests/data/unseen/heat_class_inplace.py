"""From notebook session s26_class_inplace_state: its cells as one script."""
import numpy as np

class Heat1D:
    def __init__(self, n, alpha=0.25):
        self.u = np.zeros(n)
        self.u[n // 2] = 1.0
        self.alpha = alpha
        self.t = 0

    def step(self):
        u = self.u
        u[1:-1] += self.alpha * (u[2:] - 2 * u[1:-1] + u[:-2])
        self.t += 1

    def energy(self):
        return (self.u ** 2).sum()
sim = Heat1D(16)
for _ in range(5):
    sim.step()
e = sim.energy()
peak = sim.u.max()
