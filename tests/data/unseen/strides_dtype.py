"""Meaning changes in place: strides setter (diagonal), dtype setter, as_strided, sliding windows."""
import numpy as np
from numpy.lib.stride_tricks import as_strided, sliding_window_view

a = np.zeros((4, 4))
d = a[0, :]
d.strides = (a.strides[0] + a.strides[1],)
d[:] = 1.0
b = np.arange(4, dtype=np.int64)
b.dtype = np.float64
b2 = b * 1.0
x = np.arange(10.0)
win = sliding_window_view(x, 3)
mov = win.mean(axis=1)
strided = as_strided(x, shape=(4, 3), strides=(16, 8))
pairs = strided.sum(axis=1)
