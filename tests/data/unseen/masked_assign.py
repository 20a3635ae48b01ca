"""Masked and fancy assignments of many kinds."""
import numpy as np

a = np.arange(12.0)
a[a > 5] = np.zeros(6)
b = np.arange(10.0)
b[b % 2 == 0] *= -1
c = np.arange(20).reshape(4, 5)
c[c > 10] = -c[c > 10]
d = np.linspace(0, 1, 9)
d[[0, 2, 4]] = d[[1, 3, 5]] + 10
e = np.ones((3, 3))
e[np.eye(3, dtype=bool)] = [1.0, 2.0, 3.0]
f = np.arange(6.0)
f[f > 100] = 7.0
