"""complex128 signal code: analytic signal, demodulation, phase unwrap, power spectrum."""
import numpy as np

fs = 64.0
t = np.arange(128) / fs
sig = np.cos(2 * np.pi * 5 * t + 0.3) + 0.2 * np.cos(2 * np.pi * 12 * t)
S = np.fft.fft(sig)
h = np.zeros(128)
h[0] = h[64] = 1
h[1:64] = 2
analytic = np.fft.ifft(S * h)
env = np.abs(analytic)
phase = np.unwrap(np.angle(analytic))
base = analytic * np.exp(-2j * np.pi * 5 * t)
iq = np.stack([base.real, base.imag])
psd = (np.abs(np.fft.rfft(sig)) ** 2) / sig.size
peak_hz = np.fft.rfftfreq(sig.size, 1 / fs)[psd.argmax()]
conj_prod = (analytic * analytic.conj()).real
z = np.zeros(4, dtype=np.complex128)
z.real = [1, 2, 3, 4]
z.imag += 0.5
mag = np.abs(z) ** 2
