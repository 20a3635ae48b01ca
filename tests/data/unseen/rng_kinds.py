"""Many kinds of draws from one Generator; the Generator is kept."""
import numpy as np

rng = np.random.default_rng(2024)
u = rng.random(10)
nrm = rng.normal(1.0, 2.0, size=(3, 4))
ints = rng.integers(0, 100, size=12)
ch = rng.choice(10, size=5, replace=False)
perm = rng.permutation(8)
expo = rng.exponential(2.0, 6)
unif = rng.uniform(-1, 1, (2, 3))
pois = rng.poisson(3.0, 7)
shuffled = np.arange(6.0)
rng.shuffle(shuffled)
z = u * 2 + nrm.sum()
