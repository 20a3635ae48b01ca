"""`x in lst`, dict keys from array values, sets of tuples, hash of scalars, sorting by key."""
import numpy as np

x = np.array([3, 1, 4, 1, 5, 9, 2, 6, 5, 3])
seen = {}
for v in x:
    seen[v] = seen.get(v, 0) + 1
keys = sorted(seen)
has = (4 in x, 7 in x, x[2] in [1, 4], 5 in x.tolist())
pts = np.array([[0, 1], [2, 3], [0, 1]])
uniq = {tuple(p) for p in pts}
lookup = {int(k): float(k) ** 2 for k in np.unique(x)}
byval = sorted(range(len(x)), key=lambda i: (x[i], -i))
h = hash(x[0].item()) == hash(3)
counts = {int(k): int(c) for k, c in zip(*np.unique(x, return_counts=True))}
mx = max(x, key=lambda v: v % 5)
