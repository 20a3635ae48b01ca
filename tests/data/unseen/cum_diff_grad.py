"""cumprod, cumsum, diff, gradient, convolve on a signal."""
import numpy as np

t = np.linspace(0, 2 * np.pi, 50)
sig = np.sin(t) + 0.1 * np.cos(7 * t)
growth = np.cumprod(1 + 0.01 * sig)
area = np.cumsum(sig) * (t[1] - t[0])
d1 = np.diff(sig)
d2 = np.diff(sig, n=2)
g = np.gradient(sig, t)
kernel = np.ones(5) / 5
smooth = np.convolve(sig, kernel, mode="same")
valid = np.convolve(sig, kernel, mode="valid")
zero_cross = int(np.sum(np.diff(np.sign(sig)) != 0))
