"""NEP 50 corners: NumPy scalars vs Python scalars against small dtypes."""
import numpy as np

x32 = np.linspace(0, 1, 9, dtype=np.float32)
a = x32 * np.float64(3.0)
b = x32 + np.float32(1.0)
c = x32 * 3
d = np.float64(1.5) + x32.sum()
u8 = np.arange(0, 250, 25, dtype=np.uint8)
e = u8 + 10
f = u8 * np.int64(2)
g = u8 + np.uint8(200)
h = np.int16(300) * np.arange(5, dtype=np.int16)
i = np.arange(5, dtype=np.int32) / 2
j = np.arange(5, dtype=np.float16) * 1.1
k = x32 ** 2.0
try:
    bad = u8 + 300
except OverflowError:
    bad = -1
