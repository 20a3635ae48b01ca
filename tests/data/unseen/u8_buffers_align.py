# Arrays over foreign memory: read-only buffers, an unaligned float64 view at byte offset
# 1, a bytearray that is written through NumPy, and a structured array's float field
import numpy as np

raw = (np.arange(4001, dtype=np.float64) * 0.5).tobytes()
ro = np.frombuffer(raw, dtype=np.float64)
y = ro * 2 + 1
s = float(ro.sum())
shifted = bytearray(b"\0" + raw)
un = np.frombuffer(shifted, dtype=np.float64, count=4000, offset=1)
aligned = bool(un.flags.aligned)
z = un * 3 - ro[:4000]
un2 = np.frombuffer(shifted, dtype=np.float64, count=10, offset=1)
un2 += 1.0
after = bytes(shifted[:17])
rec = np.zeros(3000, dtype=[("id", "i2"), ("v", "f8"), ("flag", "?")])
rec["v"] = np.linspace(0, 1, 3000)
rec["id"] = np.arange(3000) % 7
v = rec["v"] * 2 + rec["id"]
rec["v"] *= 0.5
total = rec["v"].sum()
