"""Boolean masks used as numbers."""
import numpy as np

rng = np.random.default_rng(11)
x = rng.random(40)
mask = x > 0.5
count = mask.sum()
frac = mask.mean()
inv = ~mask
weighted = mask * 1.5 + inv * 0.5
both = mask & (x < 0.8)
either = mask | (x < 0.1)
xored = mask ^ both
as_int = mask.astype(np.int64) + 1
score = np.sum(mask * x) / max(count, 1)
any_all = (mask.any(), inv.all(), np.count_nonzero(both))
