"""int8 / uint16 arithmetic with wraparound, floor division and modulo by negatives."""
import numpy as np

a = np.arange(-64, 64, 4, dtype=np.int8)
b = (a * 3).astype(np.int8)
c = a + a + a
q = a // -3
r = a % -5
u = np.arange(0, 65535, 2048, dtype=np.uint16)
u2 = u * np.uint16(3)
u3 = u + 40000
neg = np.arange(-7, 8, dtype=np.int32)
fdiv = neg // 2
tdiv = (neg / 2).astype(np.int32)
mod = neg % 3
pw = np.arange(5, dtype=np.int64) ** 3
