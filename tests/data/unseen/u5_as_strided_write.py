"""Overlapping as_strided views written (a Toeplitz built in place) and a diagonal view via strides."""
import numpy as np
from numpy.lib.stride_tricks import as_strided

buf = np.arange(7.0)
T = as_strided(buf[3:], shape=(4, 4), strides=(-8, 8))
toe = T.copy()
M = np.zeros((5, 5))
diag = as_strided(M, shape=(5,), strides=((5 + 1) * 8,))
diag[:] = np.arange(1.0, 6.0)
diag *= 2
off = as_strided(M[0, 1:], shape=(4,), strides=(6 * 8,))
off += -1.0
tr = M.trace()
s = M.sum(axis=0)
