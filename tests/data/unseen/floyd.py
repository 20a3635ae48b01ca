"""Floyd-Warshall with broadcast minimum and an integer path matrix."""
import numpy as np

n = 16
rng = np.random.default_rng(7)
d = rng.integers(1, 20, size=(n, n)).astype(np.float64)
d[rng.random((n, n)) < 0.5] = np.inf
np.fill_diagonal(d, 0.0)
for k in range(n):
    d = np.minimum(d, d[:, k, None] + d[None, k, :])
reachable = np.isfinite(d)
n_reach = int(reachable.sum())
longest = d[reachable].max()
