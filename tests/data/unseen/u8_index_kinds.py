# Indexing with every kind of key: NumPy integer scalars, 0-d arrays, a list of bools,
# True/None/Ellipsis, negative indices, int32 index arrays, and keys that must raise
import numpy as np

x = np.arange(24.0).reshape(4, 6) * 1.5
a = x[np.int32(2)]
b = x[np.array(1), np.uint8(3)]
c = x[[True, False, True, False]]
d = x[True]
e = x[None, ..., np.newaxis]
f = x[..., -1]
g = x[np.array([0, -1], dtype=np.int32)]
h = x[:, np.array([5, 0, 5], dtype=np.int16)]
x[np.int64(0), np.int8(1)] = -7.0
x[[False, True, False, True]] += 100
k = x[np.array(True)]
errors = []
for key in (1.0, (0, 0, 0), [0.5], np.array([1.5])):
    try:
        x[key]
    except (IndexError, TypeError) as exc:
        errors.append(type(exc).__name__)
u = np.arange(5, dtype=np.uint64)
try:
    u2 = u + (-1)
except OverflowError as exc:
    errors.append("OverflowError")
try:
    bad = np.array([True, False]) - np.array([True, True])
except TypeError:
    errors.append("TypeError-bool")
total = x.sum()
