"""Integer code: floor division and modulo with negative operands, shifts, bit counts, bool sums."""
import numpy as np

a = np.arange(-12, 12, dtype=np.int64)
b = np.array([3, -3, 5, -7] * 6, dtype=np.int64)
fd = a // b
md = a % b
dm_q, dm_r = np.divmod(a, b)
check = np.all(fd * b + md == a)
fm = np.fmod(a, b)
rem = np.remainder(a, -4)
sh = np.right_shift(np.abs(a), 1)
ls = np.left_shift(a, 2)
bits = np.array([bin(v).count("1") for v in np.abs(a)])
pop = np.zeros_like(a)
v = np.abs(a).copy()
while v.any():
    pop += v & 1
    v >>= 1
nneg = (a < 0).sum()
both = np.sum((a % 2 == 0) & (a > 0))
neg_div_scalar = a // -5
neg_mod_scalar = a % -5
i32 = a.astype(np.int32) // np.int32(-3)
