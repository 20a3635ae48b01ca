"""ndarray methods that change an array in place: fill, resize, sort, put, itemset-free updates, setflags."""
import numpy as np

a = np.arange(6.0)
a.fill(3.5)
b = np.arange(5.0) * 2
b.resize(8, refcheck=False)
c = np.linspace(3, 0, 7)
c.sort()
d = np.arange(10.0)
d.put([0, 2], [-1.0, -2.0])
e = np.arange(4.0)
e.setflags(write=False)
try:
    e[0] = 1.0
except ValueError:
    ro = True
e2 = e * 3
g = np.arange(12.0).reshape(3, 4)
g.shape = (4, 3)
g[1] += 100
h = np.arange(6.0)
h.partition(3)
k = np.arange(9.0).reshape(3, 3)
k.T.sort(axis=1)
