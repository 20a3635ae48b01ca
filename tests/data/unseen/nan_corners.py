"""NaN and infinity handling: maximum/minimum propagate NaN, fmax ignores it, reductions, sign, clip."""
import numpy as np

x = np.array([1.0, np.nan, -2.0, 3.0, np.inf, -np.inf, 0.0, -0.0] * 4)
y = np.linspace(-1, 1, 32)
mx = np.maximum(x, y)
mn = np.minimum(x, y)
fmx = np.fmax(x, y)
top = x.max()
bottom = np.min(x * 2)
nanmax = np.nanmax(x)
sg = np.sign(x)
cl = np.clip(x, -1, 1)
with np.errstate(invalid="ignore", divide="ignore"):
    ratio = y / x
    lg = np.log(y)
    sq = np.sqrt(y)
isn = np.isnan(ratio).sum()
am = np.argmax(y * (x > 0))
