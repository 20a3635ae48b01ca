# %%
import numpy as np

def my_fft(x):
    """Exercise 4: radix-2 Cooley-Tukey, recursive."""
    n = len(x)
    if n == 1:
        return x.astype(complex)
    even = my_fft(x[::2])
    odd = my_fft(x[1::2])
    tw = np.exp(-2j * np.pi * np.arange(n // 2) / n) * odd
    return np.concatenate([even + tw, even - tw])
# %% fuse
sig = np.cos(2 * np.pi * np.arange(16) / 8) + 0.25 * np.arange(16)
mine = my_fft(sig)
ref = np.fft.fft(sig)
err = np.abs(mine - ref).max()
# %%
print(err < 1e-12, np.round(mine[:3], 8))
