"""Legacy NumPy random API: np.random.seed, rand, randn, randint, choice, shuffle, permutation."""
import numpy as np

np.random.seed(123)
a = np.random.rand(5)
b = np.random.randn(2, 3)
c = np.random.randint(0, 10, size=6)
d = np.random.choice(np.arange(10.0), size=4, replace=False)
e = np.arange(8.0)
np.random.shuffle(e)
p = np.random.permutation(6)
walk = np.cumsum(np.random.choice([-1, 1], size=20))
rs = np.random.RandomState(7)
f = rs.uniform(-1, 1, size=4) * a[:4]
