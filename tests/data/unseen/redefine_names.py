"""Names rebound to other types and shapes: arrays become scalars, lists, then arrays again."""
import numpy as np

x = np.arange(6.0)
y = x * 2
x = x.reshape(2, 3)
y = y.sum()
x = x.T.copy()
z = x
x = list(x.ravel())
x = np.array(x) + y
z += 1
tmp = np.ones(3)
tmp = tmp.astype(int)
tmp = tmp * 1.5
del z
w = tmp
w = w + 1
