"""broadcast_to gives read-only views; writes raise, copies are writable; broadcast_arrays."""
import numpy as np

row = np.arange(4.0)
tiled = np.broadcast_to(row, (3, 4))
msgs = []
try:
    tiled[0, 0] = 1.0
except ValueError as e:
    msgs.append("readonly")
c = tiled.copy()
c[1] *= -1
a, b = np.broadcast_arrays(np.arange(3.0)[:, None], np.arange(4.0))
prod = a * b
flags = (tiled.flags.writeable, c.flags.writeable, a.shape, b.strides)
row += 10
after = tiled.sum()
