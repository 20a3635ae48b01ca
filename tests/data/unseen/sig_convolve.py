"""Signal processing: moving averages by convolution, correlation lags, FFT round trip, windowing."""
import numpy as np

t = np.linspace(0, 1, 64, endpoint=False)
sig = np.sin(2 * np.pi * 5 * t) + 0.3 * np.cos(2 * np.pi * 12 * t)
kernel = np.ones(5) / 5
smooth = np.convolve(sig, kernel, mode="same")
valid = np.convolve(sig, kernel, mode="valid")
xc = np.correlate(sig, sig[::-1], mode="full")
lag = int(np.argmax(xc)) - (len(sig) - 1)
win = np.hanning(len(sig))
spec = np.fft.rfft(sig * win)
power = np.abs(spec) ** 2
peak_bin = int(np.argmax(power[1:])) + 1
back = np.fft.irfft(spec, n=len(sig)) / np.where(win > 1e-12, win, 1.0)
err = np.max(np.abs(back[5:-5] - sig[5:-5]))
d1 = np.diff(sig)
d2 = np.diff(sig, n=2)
g = np.gradient(sig, t)
energy = float(np.sum(sig ** 2) / len(sig))
