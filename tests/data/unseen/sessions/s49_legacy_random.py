# %%
import numpy as np
np.random.seed(123)
pre = np.random.rand(2)
# %% fuse
x = np.random.rand(5)
n = np.random.randn(3, 2)
k = np.random.randint(0, 10, size=4)
np.random.shuffle(k)
m = x.mean() + n.std()
# %%
more = np.random.rand(2)
print(k, m.round(10), more)
