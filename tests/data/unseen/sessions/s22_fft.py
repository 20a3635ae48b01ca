# %%
import numpy as np
n = 64
dt = 0.01
# %% fuse
t = np.arange(n) * dt
sig = np.sin(2 * np.pi * 12.5 * t) + 0.3 * np.cos(2 * np.pi * 25 * t)
spec = np.fft.rfft(sig)
freqs = np.fft.rfftfreq(n, dt)
power = np.abs(spec) ** 2
peak = freqs[np.argmax(power)]
back = np.fft.irfft(spec, n)
full = np.fft.fftshift(np.fft.fft(sig))
# %%
print(peak, np.abs(back - sig).max() < 1e-12, full.shape)
