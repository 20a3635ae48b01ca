"""float32 reductions and statistics (pairwise sums, means in float32, var/std, dot in float32)."""
import numpy as np

rng = np.random.default_rng(2)
x = rng.random(1000).astype(np.float32)
s = x.sum()
m = x.mean()
v = x.var()
sd = x.std(ddof=1)
d = np.dot(x, x)
cs = np.cumsum(x)[-1]
m64 = x.mean(dtype=np.float64)
n = np.linalg.norm(x)
mx = (x * np.float32(3)).max()
z = (x - m) / sd
zs = z.sum()
