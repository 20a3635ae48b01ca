"""Cumulative ops along axes: cumsum/cumprod on 2-D, accumulate of ufuncs, diff of cumsum."""
import numpy as np

m = np.arange(1.0, 13.0).reshape(3, 4)
c0 = np.cumsum(m, axis=0)
c1 = np.cumprod(m, axis=1)
cm = np.minimum.accumulate(m[::-1], axis=0)
back = np.diff(np.cumsum(m, axis=1), axis=1, prepend=0)
run_max = np.maximum.accumulate(np.sin(np.arange(20.0)))
ints = np.cumsum(np.arange(10, dtype=np.int32))
nc = np.nancumsum(np.array([1.0, np.nan, 2.0]))
trap = np.trapezoid(m, axis=1) if hasattr(np, "trapezoid") else np.trapz(m, axis=1)
ed = np.ediff1d(m[0], to_begin=-1)
