# %%
import numpy as np
class Sim:
    def __init__(self, seed):
        self.rs = np.random.RandomState(seed)
        self.x = np.zeros(5)
    def step(self):
        self.x += self.rs.randn(5) * 0.1
        return self.x.mean()
sim = Sim(42)
np.random.seed(1)
# %% fuse
means = [sim.step() for _ in range(6)]
draw = np.random.rand(3)
idx = np.random.permutation(5)
sim.x[idx[:2]] = np.random.randint(0, 3, 2)
# %%
print(np.round(means, 12), draw, idx, sim.x, sim.rs.rand(2), np.random.rand(1))
