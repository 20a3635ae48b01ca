"""Fortran-order arrays: column-major inputs through maps, reductions, transposes, writes."""
import numpy as np

a = np.asfortranarray(np.arange(24.0).reshape(4, 6))
b = a * 2 + 1
cs = a.sum(axis=0)
rs = a.sum(axis=1)
t = a.T + 1
a[:, 0] = -1
a[1, :] += 0.5
f = np.ones((3, 4), order="F")
f *= np.arange(4)
g = np.sin(f) + f.T.T
isf = b.flags.f_contiguous
c = np.ascontiguousarray(a) - a
h = np.empty_like(a)
h[...] = a ** 2
