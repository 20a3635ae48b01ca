# %%
import numpy as np
rng = np.random.default_rng(12)
rs = np.random.RandomState(3)
def mix(g, m):
    g.shuffle(m)
    return m
# %% fuse
M = np.arange(12.0).reshape(4, 3) * 1
mix(rng, M)
P = rng.permuted(M, axis=1)
N = np.arange(10.0).reshape(5, 2) + 0
rs.shuffle(N)
idx = rs.permutation(N[:, 0])
# %%
print(M, P, N, idx, rng.random(2), rs.rand(2))
