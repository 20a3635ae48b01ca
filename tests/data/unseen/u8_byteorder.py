# Big-endian data, as read from a FITS file or a network buffer: byte-swapped arrays in
# arithmetic, in-place updates, reductions, and converted to native order
import numpy as np

raw = (np.arange(2000, dtype=np.float64) * 0.25).astype(">f8").tobytes()
x = np.frombuffer(raw, dtype=">f8").copy()
y = x * 2 + 1
x += 3
s = x.sum()
ints = np.arange(500, dtype=">i4")
z = ints * 3 - 7
native = x.astype(np.float64)
swapped = native.byteswap().view(native.dtype.newbyteorder())
w = swapped[:10] + native[:10]
m = np.maximum(x[:100], ints[:100])
