"""In-place operations NumPy refuses (int += float), bool subtraction, negative integer powers: caught."""
import numpy as np

i = np.arange(5)
errors = []
try:
    i += 1.5
except TypeError as e:
    errors.append(type(e).__name__)
i32 = np.arange(5, dtype=np.int32)
try:
    i32 *= 2.5
except TypeError as e:
    errors.append("mul")
b = np.array([True, False, True])
try:
    d = b - b
except TypeError as e:
    errors.append("boolsub")
try:
    q = np.arange(1, 4) ** -1
except ValueError as e:
    errors.append("negpow")
i += 2
f32 = np.ones(4, dtype=np.float32)
f32 += 1e-3
f32 *= np.float64(3)
ok = np.add(i, 1.5, casting="unsafe", out=np.zeros(5, dtype=np.int64))
