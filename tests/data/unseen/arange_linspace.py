"""Ranges: float arange with awkward steps, int linspace, logspace, geomspace, meshgrid sparse, ogrid."""
import numpy as np

a = np.arange(0, 1, 0.1)
b = np.arange(1, 2, 0.3)
c = np.arange(10, 0, -3)
d = np.linspace(0, 10, 7, dtype=int)
e = np.linspace(0, 1, 5, endpoint=False)
f, step = np.linspace(-1, 1, 9, retstep=True)
g = np.logspace(0, 3, 4)
h = np.geomspace(1, 1000, 4)
X, Y = np.meshgrid(np.arange(3.0), np.arange(4.0), sparse=True)
R = np.hypot(X, Y)
oy, ox = np.ogrid[0:3, 0:4]
dist = oy ** 2 + ox ** 2
s = a.sum() + b.sum() + c.sum()
