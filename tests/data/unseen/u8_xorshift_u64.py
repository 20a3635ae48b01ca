# A vectorised xorshift64* generator: one uint64 state per lane, shifts and xors in place,
# a multiply that wraps, then the top 53 bits scaled to [0, 1)
import numpy as np

lanes = 50_000
state = np.arange(1, lanes + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
acc = np.zeros(lanes)
hits = 0
for step in range(16):
    state ^= state >> np.uint64(12)
    state ^= state << np.uint64(25)
    state ^= state >> np.uint64(27)
    out = state * np.uint64(2685821657736338717)
    u = (out >> np.uint64(11)).astype(np.float64) * (1.0 / 9007199254740992.0)
    acc += u
    hits += int(np.count_nonzero(u < 0.25))
mean = acc.mean() / 16
bits = np.bitwise_and(state, np.uint64(0xFF)).astype(np.uint8)
hist = np.bincount(bits, minlength=256)
