"""np.add.at, ufunc.at with other ufuncs, reduceat segment sums."""
import numpy as np

idx = np.array([0, 2, 2, 5, 0, 0, 7])
vals = np.arange(7, dtype=float)
acc = np.zeros(8)
np.add.at(acc, idx, vals)
naive = np.zeros(8)
naive[idx] += vals
mx = np.full(8, -np.inf)
np.maximum.at(mx, idx, vals)
mul = np.ones(8)
np.multiply.at(mul, idx, vals + 1)
seg = np.arange(12.0)
starts = np.array([0, 3, 7, 10])
segsum = np.add.reduceat(seg, starts)
segmax = np.maximum.reduceat(seg, starts)
m2 = np.zeros((3, 4))
np.add.at(m2, (np.array([0, 1, 1]), np.array([1, 2, 2])), 1.0)
cnt = np.zeros(8, dtype=int)
np.add.at(cnt, idx, 1)
sub = np.arange(8.0)
np.subtract.at(sub, [1, 1, 3], 0.5)
