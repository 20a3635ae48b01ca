"""Mandelbrot with complex arrays and boolean masks."""
import numpy as np

h, w, maxit = 24, 32, 20
y, x = np.ogrid[-1.4:1.4:h * 1j, -2.0:0.8:w * 1j]
c = x + y * 1j
z = np.zeros_like(c)
divtime = maxit + np.zeros(z.shape, dtype=int)
for i in range(maxit):
    mask = np.abs(z) <= 2.0
    z[mask] = z[mask] ** 2 + c[mask]
    diverge = (np.abs(z) > 2.0) & (divtime == maxit)
    divtime[diverge] = i
escaped = int((divtime < maxit).sum())
mag = np.abs(z[np.isfinite(z)]).mean()
