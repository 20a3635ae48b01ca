"""Reductions with dtype=: bool sums, int8 overflow in sums, float32 means, cumsum dtypes, and keepdims+where."""
import numpy as np

flags = np.array([True, False, True, True] * 50)
n_true = flags.sum()
n8 = flags.sum(dtype=np.int8)
i8 = np.full(300, 100, dtype=np.int8)
s_acc = i8.sum()
s_i8 = np.add.reduce(i8, dtype=np.int8)
f32 = np.linspace(0, 1, 1001, dtype=np.float32)
m32 = f32.mean()
m64 = f32.mean(dtype=np.float64)
cs = np.cumsum(np.arange(10, dtype=np.uint8) * 30, dtype=np.uint16)
cp = np.cumprod(np.full(5, 3, dtype=np.int16))
x = np.arange(12.0).reshape(3, 4)
kw = np.sum(x, axis=1, keepdims=True, where=x > 3)
prod_bool = np.prod(flags[:4])
any_rows = np.any(x > 10, axis=1)
