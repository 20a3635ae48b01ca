"""In-place sorts of rows and views; partition in place; searchsorted on the sorted data."""
import numpy as np

rng = np.random.default_rng(9)
d = rng.integers(0, 100, size=(4, 6)).astype(float)
orig = d.copy()
d[1:3].sort(axis=1)
d[:, 0].sort()
v = d[3]
v.partition(2)
flat = np.sort(orig, axis=None)
pos = np.searchsorted(flat, [10.5, 50, 99], side="right")
desc = np.sort(orig, axis=0)[::-1]
kth = np.partition(orig.ravel(), 5)[5]
ranks = orig.argsort(axis=1, kind="stable").argsort(axis=1)
orig.sort(axis=1, kind="mergesort")
