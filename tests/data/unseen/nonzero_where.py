"""np.nonzero, one-argument np.where, argwhere, flatnonzero, extract, boolean indexing."""
import numpy as np

a = np.array([[0, 3, 0], [4, 0, 5], [0, 0, 6]])
r, c = np.nonzero(a)
w = np.where(a > 3)
aw = np.argwhere(a)
fz = np.flatnonzero(a.ravel() % 2 == 0)
vals = a[a > 0]
ext = np.extract(a % 2 == 1, a)
x = np.linspace(0, 1, 11)
first_above = np.nonzero(x > 0.35)[0][0]
mask_count = len(np.where(x < 0.5)[0])
sel = x[np.where(x > 0.6)]
a2 = a.copy()
a2[np.nonzero(a2)] *= 10
empty = np.nonzero(np.zeros(4))[0]
