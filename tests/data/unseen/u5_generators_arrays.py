"""Arrays built from generators, map, filter, np.fromiter, and sum() of a generator of arrays."""
import numpy as np

def fib():
    a, b = 0, 1
    while True:
        yield a
        a, b = b, a + b

f = np.fromiter((v for v, _ in zip(fib(), range(15))), dtype=np.int64)
ratios = f[2:] / f[1:-1]
sq = np.array(list(map(lambda v: v * v, np.arange(5.0))))
ev = np.fromiter(filter(lambda v: v % 2 == 0, range(10)), dtype=float)
tot = sum(np.ones(3) * k for k in range(4))
mat = np.array([[i * j for j in range(4)] for i in range(3)], dtype=float)
rows = [np.linspace(0, k, 3) for k in range(3)]
vs = np.vstack(rows) + mat[:, :3]
gen = (x ** 2 for x in vs)
first = next(gen)
