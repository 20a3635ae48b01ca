"""Bit tricks on floats through view(np.int64/np.uint32): fast inverse sqrt, sign flips in place."""
import numpy as np

x = np.linspace(0.5, 8, 16).astype(np.float32)
i = x.view(np.int32)
y = (np.int32(0x5F3759DF) - (i >> 1)).view(np.float32)
y = y * (1.5 - 0.5 * x * y * y)
err = np.abs(y - 1 / np.sqrt(x)).max()
d = np.linspace(-2, 2, 9)
bits = d.view(np.uint64)
bits ^= np.uint64(1 << 63)
flipped = d.copy()
exp_field = (flipped.view(np.uint64) >> np.uint64(52)) & np.uint64(0x7FF)
after = d * 2
