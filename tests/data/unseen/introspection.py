"""isinstance, np.shape, __array_interface__, memoryview, ctypes.data, __class__, np.ndim."""
import numpy as np

x = np.arange(12.0).reshape(3, 4) * 2
y = x[:, 1:3]
is_arr = isinstance(x, np.ndarray) and isinstance(x.sum(), np.floating)
shp = np.shape(y) + (np.ndim(x), np.size(y))
ai_keys = sorted(x.__array_interface__)
ai_shape = x.__array_interface__["shape"]
ai_typestr = y.__array_interface__["typestr"]
mv = memoryview(np.ascontiguousarray(y))
mv_info = (mv.format, mv.shape, mv.nbytes)
same_buf = y.ctypes.data - x.ctypes.data
cls = x.__class__.__name__
cls_is = x.__class__ is np.ndarray
base_same = y.base is x
flags = (x.flags["C_CONTIGUOUS"], y.flags.c_contiguous, y.flags.writeable)
shares = np.shares_memory(x, y)
nb = (x.nbytes, x.itemsize, x.strides)
