# %%
import numpy as np
rng = np.random.default_rng(42)
warm = rng.random(3)
# %% fuse
draws = rng.normal(size=(100, 2))
mu = draws.mean(axis=0)
walk = np.cumsum(rng.choice([-1, 1], size=50))
perm = rng.permutation(8)
# %%
nxt = rng.random(2)
print(mu.round(8), walk[-1], perm, nxt)
