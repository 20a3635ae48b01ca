"""Reductions big enough for parallel kernels: ties in argmax/argmin, NaN in max, int sums, bool counts, scans."""
import numpy as np

n = 60_000
x = np.sin(np.arange(n) * 0.001) * 5
xi = (x * 100).astype(np.int64)
ties = np.round(x)
amax = np.argmax(ties)
amin = np.argmin(ties)
y = x.copy()
y[n // 3] = np.nan
ymax = (y * 2).max()
ymin = np.min(y + 1)
isum = (xi * 3).sum()
i32sum = xi.astype(np.int32).sum()
cnt = ((x > 1) & (x < 3)).sum()
cs = np.cumsum(x * 0.5)
cp = np.cumsum(xi % 7)
u8sum = (xi % 256).astype(np.uint8).sum()
f32mean = (x.astype(np.float32) * np.float32(0.5)).mean()
std = (x - x.mean()).std()
dot = np.dot(x, x[::-1])
any_big = (np.abs(x) > 4.99999).any()
