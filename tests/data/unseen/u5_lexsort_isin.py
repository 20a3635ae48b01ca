"""Records ranked with lexsort; set operations (isin, setdiff1d, intersect1d, union1d)."""
import numpy as np

last = np.array(["b", "a", "c", "a", "b"])
first = np.array([3, 1, 2, 1, 0])
score = np.array([0.5, 0.9, 0.1, 0.3, 0.7])
order = np.lexsort((score, first, last))
ranked = score[order] * 100
ids = np.arange(20)
mask = np.isin(ids, [2, 3, 5, 7, 11, 13, 17, 19])
primes_sq = (ids[mask] ** 2).astype(np.float64)
missing = np.setdiff1d(np.arange(10), [1, 4, 9])
both = np.intersect1d(ids[::2], ids[::3])
union = np.union1d(both, missing)
weights = np.where(np.isin(union, both), 1.0, -1.0) * np.sqrt(union + 1)
