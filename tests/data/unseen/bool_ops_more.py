"""Bool arrays in arithmetic reductions and ufuncs: sum dtype, mean, prod, cumsum, max, bool ** , invert of ints."""
import numpy as np

m = np.array([True, False, True, True, False, True])
s = m.sum()
mn = m.mean()
pr = m.prod()
cs = np.cumsum(m)
mx = m.max()
am = m.argmax()
nb = ~m
ni = ~np.arange(5)
nu = ~np.arange(5, dtype=np.uint8)
x = np.arange(6.0)
masked_sum = (x * m).sum()
w = np.where(m, x, -x).sum()
cnt = np.count_nonzero(m)
mm = m * m
ma = m + m
