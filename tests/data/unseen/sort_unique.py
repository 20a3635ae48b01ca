"""Sorting, argsort, unique with counts, searchsorted, rank."""
import numpy as np

rng = np.random.default_rng(5)
v = rng.integers(0, 10, 30)
s = np.sort(v)
order = np.argsort(v, kind="stable")
ranks = np.empty_like(order)
ranks[order] = np.arange(len(v))
uniq, counts = np.unique(v, return_counts=True)
pos = np.searchsorted(s, [2, 5, 7])
f = rng.random(15)
top3 = f[np.argsort(f)[-3:]]
med = np.median(f)
pct = np.percentile(f, [10, 90])
v.sort()
