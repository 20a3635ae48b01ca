"""Global legacy seeding with np.random.seed, random_integers-like draws, and get/set_state replays."""
import numpy as np

np.random.seed(0)
a = np.random.rand(3, 2)
st = np.random.get_state()
b1 = np.random.randn(4)
np.random.set_state(st)
b2 = np.random.randn(4)
same = np.array_equal(b1, b2)
k = np.random.randint(1, 7, size=(2, 5))
dice = k.sum(axis=0)
pool = np.arange(10)
np.random.shuffle(pool)
sub = np.random.choice(pool, 3, replace=False) * 1.5
noise = a + np.random.uniform(-0.1, 0.1, size=a.shape)
