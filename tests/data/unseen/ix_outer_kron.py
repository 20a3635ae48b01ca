"""np.ix_ submatrices, open meshes (np.ogrid), np.outer, np.kron, triu/tril, fill_diagonal."""
import numpy as np

M = np.arange(36.0).reshape(6, 6)
rows, cols = [0, 2, 5], [1, 3]
sub = M[np.ix_(rows, cols)]
M[np.ix_([1, 4], [0, 5])] = -1.0
yy, xx = np.ogrid[0:4, 0:5]
dist = np.hypot(yy - 1.5, xx - 2.0)
o = np.outer(np.arange(1, 4), np.arange(1, 5))
k = np.kron(np.eye(2), np.array([[1.0, 2.0], [3.0, 4.0]]))
up = np.triu(M, 1)
lo = np.tril(M, -1)
S = up + up.T
np.fill_diagonal(S, np.arange(6.0) * 100)
dg = np.diagonal(S, offset=1).copy()
d2 = np.diag(np.diag(S))
tr = np.trace(S)
