# %%
import numpy as np
rng = np.random.default_rng(3)
A, B, C = rng.random((3, 4)), rng.random((4, 5)), rng.random((5, 2))
# %% fuse
path = np.einsum_path("ij,jk,kl->il", A, B, C, optimize="greedy")[0]
R = np.einsum("ij,jk,kl->il", A, B, C, optimize=path)
R2 = np.einsum("ij,jk,kl", A, B, C, optimize=True)
ok = np.allclose(R, A @ B @ C)
assert ok
# %%
print(path, R.shape, ok, np.abs(R - R2).max() < 1e-12)
