"""Batched linear algebra: einsum batch matmul, tensordot, outer products, traces."""
import numpy as np

rng = np.random.default_rng(11)
A = rng.normal(size=(6, 3, 4))
B = rng.normal(size=(6, 4, 2))
C = np.einsum("bij,bjk->bik", A, B)
C2 = A @ B
same = np.allclose(C, C2)
T = np.tensordot(A, B, axes=([2], [1]))        # (6,3,6,2)
diag_blocks = T[np.arange(6), :, np.arange(6), :]
v = rng.normal(size=4)
outer = np.einsum("i,j->ij", v, v)
tr = np.einsum("ii", outer)
norms = np.sqrt(np.einsum("bij,bij->b", A, A))
gram = np.einsum("bij,bkj->bik", A, A)
tdot = np.tensordot(v, v, axes=0).sum()
inner = np.inner(A[0], A[1])
kron = np.kron(np.eye(2), outer[:2, :2])
