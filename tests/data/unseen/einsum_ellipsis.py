"""einsum with ellipsis and implicit output, batched traces and bilinear forms."""
import numpy as np

rng = np.random.default_rng(8)
A = rng.standard_normal((3, 4, 4))
v = rng.standard_normal((3, 4))
traces = np.einsum("...ii->...", A)
diag = np.einsum("...ii->...i", A)
quad = np.einsum("...i,...ij,...j->...", v, A, v)
T = np.einsum("...ij->...ji", A)
implicit = np.einsum("ij,jk", A[0], A[1])
outer = np.einsum("i,j", v[0], v[1])
summed = np.einsum("b...->...", A)
