# %%
import numpy as np
import warnings
warnings.simplefilter("ignore", PendingDeprecationWarning)
# %% fuse
M = np.matrix([[2.0, 1.0], [1.0, 3.0]])
v = np.matrix([[1.0], [2.0]])
Mv = M * v
inv = M.I
sq = M ** 2
plain = np.asarray(M) * 2
trace = M.trace()
# %%
print(type(Mv).__name__, Mv.T, inv.round(6), sq.sum(), trace)
