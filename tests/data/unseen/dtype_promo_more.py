"""More dtype promotion: int32 with Python floats, bool with ints, float32 division, true_divide of ints."""
import numpy as np

i32 = np.arange(10, dtype=np.int32)
f32 = np.linspace(0, 1, 10, dtype=np.float32)
a = i32 * 0.5
b = i32 / 3
c = f32 * 2.5 + 1
d = f32 / i32.clip(1)
e = i32.astype(np.int16) * 3
f = f32 ** 2
g = np.float32(3) * i32
h = (i32 > 4) + 1
k = i32 ** 2
m = f32.sum()
n = (f32 * np.float64(2)).dtype.str
o = i32 // 2.0
p = np.int8(5) * i32
