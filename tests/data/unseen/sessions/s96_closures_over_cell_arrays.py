# %%
import numpy as np
# %% fuse
def make_shift(k):
    base = np.arange(3.0) * k
    def shift(v):
        return v + base
    return shift
sh2 = make_shift(2)
scale = lambda v, w=np.linspace(0, 1, 3) * 4: v * w
y = sh2(np.ones(3))
# %%
print(sh2(np.zeros(3)), scale(np.ones(3)), type(scale.__defaults__[0]).__name__, y)
print(type(sh2.__closure__[0].cell_contents).__name__)
