"""Empty arrays and size-one arrays through maps and reductions."""
import numpy as np

e = np.empty(0)
e2 = e * 2 + 1
es = e.sum()
ep = e.prod()
em = np.zeros((0, 3))
ems = em.sum(axis=0)
emx = np.max(em, axis=0, initial=-1.0)
one = np.array([2.0])
one2 = np.exp(one) - 1
r = np.arange(0)
rc = np.cumsum(r)
ecat = np.concatenate([e, one, e])
emean_axis = np.zeros((2, 0)).sum(axis=1)
big = np.ones(1) @ np.ones(1)
eany = np.any(e > 0)
eall = np.all(e > 0)
