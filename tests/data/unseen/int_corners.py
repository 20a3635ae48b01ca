"""Integer corners: shifts by the bit width and more, division by zero, abs of the minimum, small-int reductions."""
import numpy as np

u = np.arange(40, dtype=np.uint32)
one = np.ones(40, dtype=np.uint32)
sh = one << u
shr = np.full(40, 0xFFFFFFFF, dtype=np.uint32) >> u
i8 = np.array([-128, -1, 0, 1, 127] * 4, dtype=np.int8)
ab = np.abs(i8)
neg = -i8
with np.errstate(divide="ignore", over="ignore"):
    zd = np.arange(10) // np.zeros(10, dtype=np.int64)
    zm = np.arange(10) % np.zeros(10, dtype=np.int64)
cs8 = np.cumsum(i8)
s8 = i8.sum()
pu8 = np.arange(1, 11, dtype=np.uint8).prod()
fl = np.arange(-7.0, 8.0) // 2.0
fm = np.arange(-7.0, 8.0) % -3.0
fmod = np.fmod(np.arange(-7.0, 8.0), -3.0)
rnd = np.round(np.arange(-2.5, 3.0, 0.5))
r2 = np.round(np.linspace(0, 1, 11) * 3.14159, 2)
