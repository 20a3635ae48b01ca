"""A CRC-like hash over uint32 arrays: shifts, xor, overflow."""
import numpy as np

data = np.arange(64, dtype=np.uint32) * np.uint32(2654435761)
h = np.full(8, 0xFFFFFFFF, dtype=np.uint32)
for k in range(8):
    block = data[k * 8:(k + 1) * 8]
    h ^= block
    for _ in range(4):
        lsb = h & 1
        h = (h >> 1) ^ (np.uint32(0xEDB88320) * lsb)
h = ~h
mixed = (h << 3) | (h >> 29)
digest = int(np.bitwise_xor.reduce(mixed))
popc = sum(bin(int(v)).count("1") for v in mixed)
