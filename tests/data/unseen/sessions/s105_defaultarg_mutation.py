# %%
import numpy as np
def running(x, buf=[]):
    buf.append(x.mean())
    return np.array(buf)
class Acc:
    total = np.zeros(2)
    def add(self, v):
        Acc.total = Acc.total + v
        return self
# %% fuse
r1 = running(np.arange(4.0))
r2 = running(np.ones(3) * 5)
a = Acc().add(np.array([1.0, 2.0])).add(np.array([0.5, 0.5]))
# %%
print(r1, r2, running(np.zeros(1)), Acc.total, type(Acc.total).__name__, type(running.__defaults__[0][0]).__name__)
