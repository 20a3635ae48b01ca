# dtype= arguments and unusual dtypes: longdouble arithmetic, reductions accumulating in a
# narrower or wider type, accumulate in int8 (wrapping), object arrays of big Python ints
import numpy as np

x = np.linspace(0, 1, 5000)
x32 = x.astype(np.float32)
ld = x.astype(np.longdouble)
ld_sum = (ld * ld + np.longdouble(1) / 3).sum()
ld_prod = np.prod(1 + ld[:50] / 100)
s32 = np.sum(x, dtype=np.float32)
m64 = np.mean(x32, dtype=np.float64)
v64 = x32.var(dtype=np.float64)
c = np.cumsum(x32 * 3, dtype=np.float64)
small = (np.arange(200) % 7).astype(np.int8) * np.int8(9)
wrap = np.add.accumulate(small, dtype=np.int8)
wide = np.add.accumulate(small, dtype=np.int64)
big = np.array([2**70, 3, 2**65 + 1], dtype=object)
big2 = big * 3 + 1
u = np.arange(10, dtype=np.uint64)
u_mix = u + 2**63
prod_i = np.prod(np.arange(1, 30, dtype=np.int64))
prod_f = np.prod(np.arange(1, 30), dtype=np.float64)
dot32 = np.dot(x32[:1000], x32[:1000])
