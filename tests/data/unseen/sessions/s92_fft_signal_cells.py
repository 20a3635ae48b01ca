# %%
import numpy as np
fs = 64
t = np.arange(fs) / fs
# %% fuse
x = np.sin(2 * np.pi * 4 * t) + 0.5 * np.cos(2 * np.pi * 9 * t)
X = np.fft.rfft(x)
amp = np.abs(X) * 2 / fs
peaks = np.argsort(amp)[-2:]
X[10:] = 0
y = np.fft.irfft(X, n=fs)
# %%
print(sorted(peaks.tolist()), np.round(amp[peaks], 6), np.round(y[:4], 6), X.dtype)
