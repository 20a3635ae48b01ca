"""From notebook session s66_complex_research_script: its cells as one script."""
import numpy as np
from scipy import signal, ndimage
rng = np.random.default_rng(11)
fs = 200.0

def bandpower(x, lo, hi):
    f, p = signal.welch(x, fs=fs, nperseg=64)
    band = (f >= lo) & (f <= hi)
    return np.trapezoid(p[band], f[band])
t = np.arange(0, 4, 1 / fs)
trials = np.sin(2 * np.pi * 10 * t) + 0.5 * rng.standard_normal((5, t.size))
alpha = np.array([bandpower(tr, 8, 12) for tr in trials])
beta = np.array([bandpower(tr, 13, 30) for tr in trials])
ratio = alpha / beta
env = np.abs(signal.hilbert(trials, axis=1))
smooth_env = ndimage.gaussian_filter1d(env, 5, axis=1)
