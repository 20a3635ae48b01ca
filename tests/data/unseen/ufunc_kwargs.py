"""ufunc keywords: where=, dtype=, accumulate, reduce, outer; reductions with dtype and keepdims."""
import numpy as np

x = np.linspace(-2, 2, 21)
y = np.full_like(x, -1.0)
np.sqrt(x, out=y, where=x >= 0)
run_max = np.maximum.accumulate(np.sin(x * 3))
prod = np.multiply.reduce(x[x > 0])
tbl = np.multiply.outer(np.arange(1, 4), np.arange(1, 5))
i8 = np.arange(100, dtype=np.int8)
s_default = i8.sum()
s_i8 = i8.sum(dtype=np.int8)
mean32 = x.astype(np.float32).mean(dtype=np.float64)
keep = (x.reshape(3, 7) ** 2).sum(axis=1, keepdims=True)
norm = x.reshape(3, 7) / keep
close = np.allclose(np.sin(x) ** 2 + np.cos(x) ** 2, 1.0)
dm_q, dm_r = np.divmod(np.arange(-5, 6), 3)
