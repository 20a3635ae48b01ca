"""Bit fields: packbits/unpackbits, bitwise ops with shifts, tobytes/frombuffer round trip."""
import numpy as np

flags = np.array([1, 0, 1, 1, 0, 0, 1, 0, 1, 1, 1], dtype=bool)
packed = np.packbits(flags)
unpacked = np.unpackbits(packed)[: flags.size].astype(bool)
w = np.arange(16, dtype=np.uint16)
mixed = (w << 3) ^ (w >> 1) | np.uint16(0x8000)
bitcount = np.unpackbits(mixed.view(np.uint8)).reshape(16, 16).sum(axis=1)
raw = mixed.tobytes()
again = np.frombuffer(raw, dtype=np.uint16).copy()
again[0] = 7
inv = np.invert(w.astype(np.int8))
lsb = np.bitwise_and(w, 1).astype(bool)
