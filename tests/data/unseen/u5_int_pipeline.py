"""Integer arithmetic: mixed int32/uint32/int64 promotion, true division of ints, negative powers error, clip on ints with out=."""
import numpy as np

a = np.arange(-5, 5, dtype=np.int32)
b = np.arange(10, dtype=np.uint32)
mix = a + b
div = a / 2
fl = a // 3
mo = a % -3
sh = (b << 28) >> 27
neg = -b
p = np.power(a, 2)
try:
    bad = np.power(a, -1)
except ValueError as e:
    bad = str(e)
c = np.empty_like(a)
np.clip(a * 7, -10, 10, out=c)
ab = np.abs(np.array([-128, 127], dtype=np.int8))
big = np.int64(2) ** 40 + a
