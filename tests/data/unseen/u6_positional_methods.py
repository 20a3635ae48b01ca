"""Survey statistics written with ndarray methods called by position (axis, dtype, out, ddof)."""
import numpy as np

rng = np.random.default_rng(11)
scores = rng.integers(1, 6, size=(40, 7)).astype(float)   # 40 respondents, 7 items


def cronbach(items):
    item_vars = items.var(0, None, None, 1)          # axis=0, ddof=1
    totals = items.sum(1)
    k = items.shape[1]
    return k / (k - 1) * (1 - item_vars.sum() / totals.var(None, None, None, 1))


alpha = cronbach(scores)
col_means = scores.mean(0, np.float32, None, True)
row_std = scores.std(1, None, None, 1, True)
spread = scores.max(0, None, False) - scores.min(0, None, False)
agree = (scores >= 4).all(1, None, None, True)
any_low = (scores <= 1).any(0)
best = scores.argmax(1)
running = scores.cumsum(0, np.float64)[-1]
out = np.zeros(7)
scores.sum(0, None, out)
weighted = scores.sum(None, None, None, False, 100.0, scores > 2)
