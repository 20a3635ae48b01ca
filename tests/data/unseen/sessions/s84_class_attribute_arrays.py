# %%
import numpy as np
class Tracker:
    count = 0
    def __init__(self, n):
        self.w = np.zeros(n)
        self.log = []
    def update(self, g, lr=0.1):
        self.w -= lr * g
        self.log.append(self.w.copy())
        Tracker.count += 1
        return self
    @property
    def norm(self):
        return np.linalg.norm(self.w)
t = Tracker(3)
# %% fuse
for k in range(4):
    t.update(np.array([1.0, -2.0, k]))
n1 = t.norm
last = t.log[-1]
# %%
t.update(np.ones(3))
print(Tracker.count, len(t.log), t.w, n1, last)
