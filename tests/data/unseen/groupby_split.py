"""Group-by via argsort + np.split, np.lexsort on two keys, reduceat sums."""
import numpy as np

keys = np.array([3, 1, 2, 3, 1, 1, 2, 3, 3, 0])
vals = np.arange(10.0) ** 1.5
order = np.argsort(keys, kind="stable")
sk, sv = keys[order], vals[order]
cuts = np.flatnonzero(np.diff(sk)) + 1
groups = np.split(sv, cuts)
sums = np.array([g.sum() for g in groups])
starts = np.r_[0, cuts]
sums2 = np.add.reduceat(sv, starts)
last = np.array([1, 0, 1, 2, 0, 2, 1, 0, 0, 1])
first = np.array([5, 3, 5, 1, 3, 2, 5, 1, 1, 9])
lex = np.lexsort((last, first))
ranked = np.stack([first[lex], last[lex]])
means = {int(k): g.mean() for k, g in zip(np.unique(sk), groups)}
