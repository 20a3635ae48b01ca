"""np.nditer with external_loop, multi_index, and op_flags readwrite over a broadcast pair."""
import numpy as np

a = np.arange(12.0).reshape(3, 4)
b = np.array([1.0, 2.0, 3.0, 4.0])
out = np.empty_like(a)
with np.nditer([a, b, out], op_flags=[["readonly"], ["readonly"], ["writeonly"]]) as it:
    for x, y, z in it:
        z[...] = x * y + 1
chunks = []
for c in np.nditer(a * 2, flags=["external_loop"], order="F"):
    chunks.append(c.sum())
it = np.nditer(a, flags=["multi_index"])
diag = 0.0
for v in it:
    i, j = it.multi_index
    if i == j:
        diag += float(v)
m = a.copy()
with np.nditer(m, op_flags=["readwrite"]) as it2:
    for v in it2:
        v[...] = v ** 0.5
