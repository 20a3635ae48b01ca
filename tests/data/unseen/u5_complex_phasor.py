"""Phasors: complex arrays with angle, conj, abs, unwrap and real_if_close."""
import numpy as np

t = np.linspace(0, 1, 64, endpoint=False)
z = np.exp(2j * np.pi * 3 * t) * (1 + 0.2 * np.cos(2 * np.pi * t))
ph = np.angle(z)
unw = np.unwrap(ph)
amp = np.abs(z)
power = (z * np.conj(z)).real
rc = np.real_if_close(z * np.conj(z))
z2 = z.copy()
z2.imag[::2] = 0.0
z2.real *= -1
deg = np.angle(z2[:5], deg=True)
rot = z * np.exp(-1j * unw)
c64 = z.astype(np.complex64) * np.float32(2)
