"""Particles in a recarray: attribute access, in-place updates of fields, sorting by a field."""
import numpy as np

n = 8
p = np.recarray(n, dtype=[("x", "f8"), ("v", "f8"), ("m", "f4"), ("id", "i4")])
p.x = np.linspace(0, 1, n)
p.v = np.cos(np.arange(n))
p.m = np.arange(1, n + 1, dtype=np.float32)
p.id = np.arange(n)[::-1]
dt = 0.1
for _ in range(5):
    p.x += p.v * dt
    p.v -= p.x * dt
ke = 0.5 * p.m * p.v ** 2
order = np.argsort(p, order="x")
first = p[order[0]]
heavy = p[p.m > 4].id
mom = float((p.m * p.v).sum())
