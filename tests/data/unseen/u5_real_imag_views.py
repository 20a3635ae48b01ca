"""Writing through .real and .imag views of complex arrays, and through views of them."""
import numpy as np

z = np.linspace(0, 1, 6) * (1 + 2j)
z.real += 1
z.imag[1::2] *= -1
re = z.real
re[0] = 100.0
zz = (z * z.conj()).real.sum()
w = np.zeros((3, 3), dtype=complex)
w.imag = np.eye(3)
w.real[:, 0] = np.arange(3.0)
mag = np.abs(w)
ph = np.angle(w + 0.5)
c64 = np.ones(4, dtype=np.complex64)
c64.imag = np.arange(4, dtype=np.float32) / 3
tot = c64.sum()
