# Functions that write their argument in place: shuffles, fill_diagonal, nan_to_num with
# copy=False, out= on round/matmul/cumsum (overlapping), and writes through a memoryview
import numpy as np

rng = np.random.default_rng(21)
deck = np.arange(20.0) * 1.5
deck += 1
rng.shuffle(deck)
first = deck[:5].sum()
grid = rng.random((6, 6)) + deck[:6, None]
rng.shuffle(grid, axis=1)
np.random.seed(4)
legacy = np.linspace(0, 1, 10) ** 2
np.random.shuffle(legacy)
perm = rng.permutation(legacy)
m = np.ones((5, 5)) * 3.0
m += np.arange(5.0)
np.fill_diagonal(m, -1.0)
m2 = np.zeros((4, 6))
np.fill_diagonal(m2, np.arange(1.0, 5.0), wrap=True)
bad = np.array([1.0, np.nan, np.inf, -np.inf, 2.0]) * 2
np.nan_to_num(bad, copy=False, nan=0.5, posinf=9.0)
r = np.linspace(0, 1, 7) / 3
np.round(r, 2, out=r)
a = np.arange(9.0).reshape(3, 3) + 1
c = np.empty((3, 3))
np.matmul(a, a.T, out=c)
s = np.arange(10.0) * 0.5
np.cumsum(s, out=s)
buf = np.zeros(8)
buf += 2
mv = memoryview(buf)
mv[3] = 7.0
total = buf.sum()
part = np.partition(rng.random(15) + s.mean(), 4)[:4]
