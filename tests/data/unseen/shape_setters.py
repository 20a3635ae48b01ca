"""In-place meaning changes: shape setter, resize on a fresh array, view with another dtype."""
import numpy as np

x = np.arange(16.0)
x.shape = (4, 4)
y = x * 2
z = np.zeros(6)
z.resize((2, 3))
z += 1
bits = np.arange(4, dtype=np.float32).view(np.int32)
f = np.ones(4)
f.setflags(write=False)
g = f + 1
tr = x.T.copy()
tr.shape = (16,)
