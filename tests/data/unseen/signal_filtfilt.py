"""From notebook session s17_scipy_signal: its cells as one script."""
import numpy as np
from scipy import signal
fs = 100.0
t = np.arange(0, 2, 1 / fs)
x = np.sin(2 * np.pi * 3 * t) + 0.5 * np.sin(2 * np.pi * 30 * t)
b, a = signal.butter(4, 10, fs=fs)
y = signal.filtfilt(b, a, x)
conv = signal.convolve(x, np.ones(5) / 5, mode="same")
peaks, _ = signal.find_peaks(y)
resid = (x - y).std()
