"""User code raises and catches an exception halfway."""
import numpy as np

x = np.linspace(1, 2, 10)
y = x * 3
try:
    bad = np.ones(3) + np.ones(4)
except ValueError as e:
    msg = str(e)[:20]
    bad = None
z = y - 1
try:
    raise RuntimeError("halfway")
except RuntimeError:
    z = z * 2
with np.errstate(divide="ignore", invalid="ignore"):
    q = np.log(x - 1.5)
nan_count = int(np.isnan(q).sum())
