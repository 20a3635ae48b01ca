"""Complex arithmetic: conj, abs, angle, exp of imaginary, complex64, mixed real/complex reductions."""
import numpy as np

t = np.linspace(0, 1, 32)
z = np.exp(2j * np.pi * 3 * t)
w = z * np.conj(z)
mag = np.abs(z + 0.5)
ang = np.angle(z)
c64 = z.astype(np.complex64) * np.float32(2)
zsum = z.sum()
zmean = np.mean(z * t)
real_mix = t + z.real * 1j
prod = (z[:4] ** 3).prod()
recip = 1 / (z + 2)
sqr = z * z
cub = z ** 3
dot = np.vdot(z, z)
