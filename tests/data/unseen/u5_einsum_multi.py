"""einsum with three and four operands, optimize=True and an explicit path."""
import numpy as np

rng = np.random.default_rng(5)
A = rng.random((4, 5))
B = rng.random((5, 6))
C = rng.random((6, 3))
D = rng.random(3)
chain = np.einsum("ij,jk,kl->il", A, B, C, optimize=True)
full = np.einsum("ij,jk,kl,l->i", A, B, C, D, optimize="greedy")
path, info = np.einsum_path("ij,jk,kl->il", A, B, C, optimize="optimal")
again = np.einsum("ij,jk,kl->il", A, B, C, optimize=path)
bil = np.einsum("i,ij,j->", A[:, 0], A, A[0])
T = rng.random((3, 4, 4))
traces = np.einsum("kii->k", T)
outer = np.einsum("i,j->ij", D, D) - np.outer(D, D)
diff = np.abs(chain - A @ B @ C).max()
