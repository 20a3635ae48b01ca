"""Escape-time Mandelbrot that keeps only the points still inside, in complex64.

Each step squares every live point in place, records the ones that escaped into the
picture through their pixel coordinates, and shrinks the point, coordinate and constant
arrays to the survivors. A fused kernel rounds |z| otherwise than NumPy's hypotf now
and then, so a point at the radius may escape one step earlier or later: the run's
counts must never overrun the arrays capture sized.
"""
import numpy as np

cols, rows, steps, radius = 160, 120, 40, 2.0
px, py = np.mgrid[0:cols, 0:rows]
px, py = px.astype(np.uint32), py.astype(np.uint32)
re = np.linspace(-2.25, 0.75, cols, dtype=np.float32)[px]
im = np.linspace(-1.25, 1.25, rows, dtype=np.float32)[py]
c = re + im * 1j
escaped_at = np.zeros(c.shape, dtype=np.uint32)
final_z = np.zeros(c.shape, dtype=np.complex64)
px.shape = py.shape = c.shape = cols * rows
z = np.zeros(c.shape, np.complex64)
for step in range(steps):
    if not len(z):
        break
    np.multiply(z, z, z)
    np.add(z, c, z)
    gone = abs(z) > radius
    escaped_at[px[gone], py[gone]] = step + 1
    final_z[px[gone], py[gone]] = z[gone]
    np.logical_not(gone, gone)
    z = z[gone]
    px, py = px[gone], py[gone]
    c = c[gone]
still_inside = int((escaped_at == 0).sum())
mean_escape = float(escaped_at[escaped_at > 0].mean())
