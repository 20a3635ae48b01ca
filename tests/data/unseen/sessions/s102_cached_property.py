# %%
import numpy as np
from functools import cached_property
class Signal:
    def __init__(self, n):
        self.t = np.linspace(0, 1, n)
    @cached_property
    def spectrum(self):
        return np.abs(np.fft.rfft(np.sin(2 * np.pi * 3 * self.t)))
    @cached_property
    def energy(self):
        return (np.sin(2 * np.pi * 3 * self.t) ** 2).sum()
sig = Signal(32)
# %% fuse
e = sig.energy
peak = sig.spectrum.argmax()
sig.t *= 2
# %%
print(e, peak, sig.__dict__.keys(), type(sig.__dict__["energy"]).__name__, sig.t[:3])
