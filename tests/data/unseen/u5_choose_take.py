"""np.choose, np.take with mode= and out=, np.compress, np.extract, np.ediff1d, np.gcd/lcm."""
import numpy as np

choices = [np.arange(5.0), np.arange(5.0) * 10, -np.ones(5)]
sel = np.array([0, 1, 2, 1, 0])
ch = np.choose(sel, choices)
t = np.take(np.arange(10.0) ** 2, [-1, 12, 3], mode="wrap")
tc = np.take(np.arange(10.0), [-3, 15], mode="clip")
buf = np.empty(3)
np.take(np.linspace(0, 1, 5), [4, 0, 2], out=buf)
cm = np.compress([True, False, True], np.arange(9.0).reshape(3, 3), axis=0)
ex = np.extract(np.arange(10) % 3 == 0, np.arange(10.0) * 1.5)
ed = np.ediff1d(np.array([1.0, 4.0, 9.0, 16.0]), to_begin=0.0, to_end=[99.0])
g = np.gcd(np.arange(12, 24), 18)
l = np.lcm.reduce(np.arange(1, 9))
