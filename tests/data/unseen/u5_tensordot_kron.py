"""tensordot with axes pairs, kron, multi_dot, outer with out=, and matmul of stacks with out=."""
import numpy as np

A = np.arange(24.0).reshape(2, 3, 4)
B = np.arange(12.0).reshape(4, 3)
T = np.tensordot(A, B, axes=([1, 2], [1, 0]))
K = np.kron(np.eye(2), np.array([[1.0, 2.0], [3.0, 4.0]]))
M = np.linalg.multi_dot([np.ones((2, 3)), np.arange(12.0).reshape(3, 4), np.ones((4, 2))])
o = np.empty((3, 4))
np.outer(np.arange(3.0), np.arange(4.0) + 1, out=o)
S = np.arange(18.0).reshape(2, 3, 3)
P = np.empty((2, 3, 3))
np.matmul(S, S, out=P)
P += K[:3, :3]
tr = np.trace(P, axis1=1, axis2=2)
