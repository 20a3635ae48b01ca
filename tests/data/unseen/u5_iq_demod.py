"""I/Q demodulation written with np.real/np.imag functions (not attributes), a complex mixer and a moving-average low-pass."""
import numpy as np

fs, fc, n = 1000.0, 50.0, 400
t = np.arange(n) / fs
msg = np.cos(2 * np.pi * 3 * t)
rf = (1 + 0.5 * msg) * np.cos(2 * np.pi * fc * t + 0.3)
lo = np.exp(-2j * np.pi * fc * t)
bb = rf * lo
k = np.ones(20) / 20
i_lp = np.convolve(np.real(bb), k, mode="same")
q_lp = np.convolve(np.imag(bb), k, mode="same")
env = 2 * np.hypot(i_lp, q_lp)
phase = np.arctan2(q_lp, i_lp)
rec = (env - env[50:-50].mean()) / 0.5
err = np.abs(rec[50:-50] - msg[50:-50]).max()
