# Aliasing as people meet it: a name bound twice, slices that are views, copies that are not,
# in-place operators through each, np.shares_memory checks, and id-based identity tests
import numpy as np

a = np.arange(12.0).reshape(3, 4)
b = a                 # the same object
c = a[:, 1:3]         # a view
d = a.copy()
e = a.T               # a transposed view
b += 1
c *= 2
e[0, :] = -1.0        # writes a's first column
d -= 5
same_obj = b is a
shares = (bool(np.shares_memory(a, c)), bool(np.shares_memory(a, d)), bool(np.may_share_memory(a, e)))
f = a.ravel()          # a view of a contiguous array
f[::5] = 100.0
g = a.flatten()        # always a copy
g[:] = 0.0
h = a.reshape(-1)
h[-1] = 7.5
rows = [a[i] for i in range(3)]
for r in rows:
    r[...] = r[::-1]
total = a.sum() + d.sum() + g.sum()
base_is_a = c.base is a
