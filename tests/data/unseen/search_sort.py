"""searchsorted binning, argsort with take_along_axis, ranks, lexsort, partition."""
import numpy as np

rng = np.random.default_rng(5)
edges = np.linspace(0, 1, 6)
x = rng.random(30)
bins = np.searchsorted(edges, x, side="right") - 1
left = np.searchsorted(edges, [0.0, 0.5, 1.0])
M = rng.random((4, 6))
order = np.argsort(M, axis=1)
sorted_rows = np.take_along_axis(M, order, axis=1)
ranks = np.empty_like(order)
np.put_along_axis(ranks, order, np.arange(6)[None, :].repeat(4, 0), axis=1)
top2 = np.take_along_axis(M, np.argsort(-M, axis=1)[:, :2], axis=1)
keys = np.lexsort((x[:10], np.round(x[:10] * 3)))
part = np.partition(x, 5)[:5]
kth = np.sort(part)
desc = np.sort(x)[::-1]
stable = np.argsort(np.round(x * 4), kind="stable")
cum_hist = np.cumsum(np.bincount(bins, minlength=5))
