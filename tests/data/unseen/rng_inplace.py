"""Generator choice / permutation / shuffle (in place), a.sort() in place, bootstrap means."""
import numpy as np

rng = np.random.default_rng(2024)
data = rng.normal(10, 2, size=30)
deck = np.arange(12)
rng.shuffle(deck)
perm = rng.permutation(data)
pick = rng.choice(data, size=5, replace=False)
weighted = rng.choice(4, size=8, p=[0.1, 0.2, 0.3, 0.4])
boots = np.array([rng.choice(data, size=data.size).mean() for _ in range(20)])
ci = np.percentile(boots, [5, 95])
srt = data.copy()
srt.sort()
M = rng.integers(0, 100, (3, 5))
M.sort(axis=1)
rng.shuffle(M)
state_after = rng.random(2)
