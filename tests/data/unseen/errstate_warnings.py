"""np.errstate blocks and warnings.catch_warnings around divisions by zero and log of negatives."""
import warnings
import numpy as np

x = np.linspace(-1, 1, 9)
with np.errstate(divide="ignore", invalid="ignore"):
    inv = 1.0 / x
    lg = np.log(x)
safe = np.where(np.isfinite(inv), inv, 0.0)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    r = np.sqrt(x)
    q = x / 0.0
n_warn = len(caught)
kinds = sorted({type(w.message).__name__ for w in caught})
old = np.seterr(over="ignore")
big = np.exp(np.array([1000.0, 1.0]))
np.seterr(**old)
nans = int(np.isnan(lg).sum())
