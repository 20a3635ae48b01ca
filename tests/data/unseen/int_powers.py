"""Integer powers and overflow: 2**arange wrapping, negative bases, int abs of the minimum, squares of int8."""
import numpy as np

k = np.arange(70)
with np.errstate(over="ignore"):
    p2 = 2 ** k
    p3 = np.int64(3) ** k
i8 = np.arange(-128, 128, 17, dtype=np.int8)
sq8 = i8 * i8
cube = i8 ** 3
neg = (-np.arange(5)) ** 3
ab = np.abs(np.array([np.iinfo(np.int64).min, -5, 5]))
powf = np.arange(5) ** 0.5
powneg = np.arange(1, 5) ** -1.0
sq_u = np.arange(300, dtype=np.uint16) ** 2
