"""Vectorised Newton iteration for cube roots with np.where guards and a data-dependent while."""
import numpy as np

a = np.array([8.0, 27.0, 2.0, 0.0, -64.0, 1e-3, 1000.0])
x = np.where(a == 0, 0.0, np.sign(a) * np.ones_like(a))
it = 0
while True:
    f = x ** 3 - a
    fp = 3 * x ** 2
    step = np.where(fp != 0, f / np.where(fp != 0, fp, 1.0), 0.0)
    x = x - step
    it += 1
    if np.abs(step).max() < 1e-12 or it >= 100:
        break
err = np.abs(x ** 3 - a).max()
roots = x.round(6)
