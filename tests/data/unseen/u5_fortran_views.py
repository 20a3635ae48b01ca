"""Fortran-ordered reshapes, ravel(order='F'), asfortranarray and in-place writes through them."""
import numpy as np

a = np.arange(24.0).reshape(4, 6, order="F")
b = a * 2 + 1
flat_f = b.ravel(order="F")
flat_c = b.ravel()
back = flat_f.reshape(4, 6, order="F") - b
fa = np.asfortranarray(np.linspace(0, 1, 12).reshape(3, 4))
fa[:, 1] += 10.0
fa *= 0.5
col_sums = fa.sum(axis=0)
v = fa.reshape(12, order="F")
v[::3] = -1.0
t = np.ascontiguousarray(fa.T)
t[0] += 100
kinds = (fa.flags["F_CONTIGUOUS"], t.flags["C_CONTIGUOUS"], v.base is None)
