# %%
import numpy as np
from numpy import linalg as LA
from numpy.linalg import norm

def gram_schmidt(V):
    Q = np.zeros_like(V)
    for k in range(V.shape[1]):
        v = V[:, k].copy()
        for j in range(k):
            v -= (Q[:, j] @ V[:, k]) * Q[:, j]
        Q[:, k] = v / norm(v)
    return Q
# %% fuse
V = np.array([[1.0, 1, 0], [1, 0, 1], [0, 1, 1], [1, 1, 1]])
Q = gram_schmidt(V)
orth = np.abs(Q.T @ Q - np.eye(3)).max()
cond = LA.cond(V)
# %%
print(orth < 1e-12, round(float(cond), 8), Q[:, 0].round(8))
