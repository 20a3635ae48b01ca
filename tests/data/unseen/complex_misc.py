"""Complex arrays: linspace to a complex endpoint, FFT-like twiddles, conj, angle."""
import numpy as np

zs = np.linspace(2, complex(4, 5), 7)
tw = np.exp(-2j * np.pi * np.arange(8) / 8)
sig = np.cos(np.arange(8) * 0.3)
dft = np.array([(sig * tw ** k).sum() for k in range(8)])
ref = np.fft.fft(sig)
err = np.abs(dft - ref).max()
mag = np.abs(zs) ** 2
ang = np.angle(zs * zs.conj() + 1j)
re_im = zs.real + zs.imag
