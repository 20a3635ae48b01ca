"""Low-pass filtering with rfft/irfft, fftfreq and fftshift; 2-D fft of an image."""
import numpy as np

n = 128
t = np.arange(n) / n
sig = np.sin(2 * np.pi * 5 * t) + 0.3 * np.sin(2 * np.pi * 40 * t)
F = np.fft.rfft(sig)
f = np.fft.rfftfreq(n, d=1 / n)
F[f > 20] = 0
smooth = np.fft.irfft(F, n)
resid = sig - smooth
img = np.outer(np.hanning(16), np.hanning(16))
G = np.fft.fftshift(np.fft.fft2(img))
mag = np.log1p(np.abs(G))
freqs = np.fft.fftshift(np.fft.fftfreq(16))
back = np.fft.ifft2(np.fft.ifftshift(G)).real - img
