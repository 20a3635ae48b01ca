"""Legacy seeding in a Monte-Carlo estimate of pi, RandomState methods, get_state round trip."""
import numpy as np

np.random.seed(0)
inside = 0
for batch in range(5):
    pts = np.random.rand(200, 2)
    inside += int(((pts ** 2).sum(axis=1) <= 1).sum())
pi_est = 4 * inside / 1000
noise = np.random.randn(6) * 0.1
rs = np.random.RandomState(99)
st = rs.get_state()
a = rs.normal(size=3)
rs.set_state(st)
b = rs.normal(size=3)
same = np.array_equal(a, b)
ints = rs.randint(0, 5, size=(2, 3))
exp = rs.exponential(2.0, size=4).round(3)
pk = rs.permutation(np.arange(5) * 2)
