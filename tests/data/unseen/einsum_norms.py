"""einsum with three operands, norms and a bilinear form."""
import numpy as np

rng = np.random.default_rng(3)
A = rng.standard_normal((6, 5))
B = rng.standard_normal((5, 4))
C = rng.standard_normal((4, 3))
ABC = np.einsum("ij,jk,kl->il", A, B, C)
ref = A @ B @ C
diff = np.linalg.norm(ABC - ref)
v = rng.random(6)
w = rng.random(3)
bil = np.einsum("i,ij,j->", v, ABC, w)
fro = np.linalg.norm(A, "fro")
row_norms = np.linalg.norm(A, axis=1)
unit = A / row_norms[:, None]
trace = np.einsum("ii", A[:5, :5])
