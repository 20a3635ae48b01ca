"""Element-wise corner cases a compiled kernel must match: shifts past the width, int8 // -1, fmod/remainder signs, half-even rounding, cbrt, nan in max/fmax, uint64+int64."""
import numpy as np

n = 64
i = np.arange(n, dtype=np.int64) - 32
i8 = (np.arange(n) * 7 - 128).astype(np.int8)
u8 = np.arange(n, dtype=np.uint8) * 5
f = np.linspace(-4.5, 4.5, n)
with np.errstate(all="ignore"):
    shl = np.left_shift(np.int64(1), (np.arange(n) % 70).astype(np.int64))
    shr = np.right_shift(i * 1000, (np.arange(n) % 66).astype(np.int64))
    d1 = i8 // np.int8(-1)
    fz = f // 0.0
    iz = i // (i % 3)
    mz = i % (i % 4)
rem = np.remainder(f, -1.5)
fm = np.fmod(f, -1.5)
pym = f % 2.5
r0 = np.round(f)
r1 = np.round(f * 1.11, 1)
ri = np.rint(f)
tr = np.trunc(f)
cb = np.cbrt(f * 3)
fn = f.copy()
fn[::7] = np.nan
mx = np.maximum(fn, 0.0)
fx = np.fmax(fn, 0.0)
mn = np.minimum(fn, i)
sg = np.sign(fn)
mixed = np.arange(n, dtype=np.uint64) + i
neg_u = -u8
bools = (f > 0) + (f > 1)
bsum = (f > 0).astype(np.int8) * np.int8(100) + np.int8(100)
ex = np.expm1(f * 1e-10) * 1e10
l1p = np.log1p(np.abs(f) * 1e-12) * 1e12
pw = np.power(i, 3) + np.power(i8.astype(np.int16), 2)
f16 = (f.astype(np.float16) * np.float16(3.3)).astype(np.float16)
