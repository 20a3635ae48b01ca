"""np.matrix arithmetic (where * is a matrix product), .I, .H, and conversion back with np.asarray."""
import warnings
import numpy as np

warnings.simplefilter("ignore", PendingDeprecationWarning)
M = np.matrix([[2.0, 1.0], [1.0, 3.0]])
v = np.matrix([[1.0], [2.0]])
prod = M * v
inv = M.I
ident = M * inv
sq = M ** 2
elem = np.multiply(M, M)
arr = np.asarray(M) * 2
rowsum = M.sum(axis=1)
herm = (M + 1j * M).H
quad = (v.T * M * v).item()
