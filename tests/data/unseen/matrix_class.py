"""np.matrix products and a record (structured) array."""
import numpy as np

M = np.matrix([[1.0, 2.0], [3.0, 4.0]])
Minv = M.I
P = M * M
v = np.asarray(M).ravel() * 2
rec = np.zeros(4, dtype=[("x", "f8"), ("n", "i4")])
rec["x"] = np.arange(4.0) * 1.5
rec["n"] = np.arange(4) * 2
total = rec["x"].sum() + rec["n"].sum()
