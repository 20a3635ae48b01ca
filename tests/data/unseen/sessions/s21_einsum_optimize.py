# %%
import numpy as np
rng = np.random.default_rng(3)
A = rng.random((6, 5))
B = rng.random((5, 4))
C = rng.random((4, 3))
# %% fuse
chain = np.einsum("ij,jk,kl->il", A, B, C, optimize=True)
greedy = np.einsum("ij,jk,kl->il", A, B, C, optimize="greedy")
path, info = np.einsum_path("ij,jk,kl->il", A, B, C, optimize="optimal")
gram = np.einsum("ij,ik->jk", A, A, optimize=True)
tr = np.einsum("ii->", gram)
# %%
print(np.allclose(chain, A @ B @ C), path, tr.round(8))
