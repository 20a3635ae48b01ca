"""Writes through views: real/imag of complex, diagonal views, fill, copyto with where."""
import numpy as np

z = np.zeros(6, dtype=complex)
z.real[:] = np.arange(6.0)
z.imag += 2.0
a = np.zeros((5, 5))
diag = np.einsum("ii->i", a)
diag += 3.0
a.flat[1::6] = -1.0
f = np.empty(7)
f.fill(2.5)
dst = np.zeros(7)
np.copyto(dst, f * 2, where=np.arange(7) % 2 == 0)
row = a[2]
row *= 4
col = a[:, 3]
col[:] = np.arange(5.0)
t = a.T
t[0, 1] = 99.0
