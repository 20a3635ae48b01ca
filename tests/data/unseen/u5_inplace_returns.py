"""Functions that change their argument and return it: nan_to_num(copy=False), byteswap(inplace=True), dot(out=), ascontiguousarray of a contiguous array."""
import numpy as np

raw = np.array([[1.0, np.nan, 3.0], [np.inf, -np.inf, 6.0]]) * 2
clean = np.nan_to_num(raw, copy=False, nan=0.0, posinf=1e3, neginf=-1e3)
same = clean is raw
col_means = raw.mean(axis=0)
big = np.arange(4, dtype=np.int32) * 256
swapped = big.byteswap(inplace=True)
as_le = big.view(big.dtype.newbyteorder()) + 0
M = np.arange(6.0).reshape(2, 3)
buf = np.empty(2)
res = M.dot(np.array([1.0, 0.5, 0.25]), out=buf)
c = np.ascontiguousarray(M)
c[0, 0] = -7.0
alias = (c is M, res is buf)
total = buf.sum() + M.sum()
