# %%
import numpy as np, warnings
warnings.simplefilter("ignore", PendingDeprecationWarning)
M = np.matrix("1 2; 3 4")
# %% fuse
N = M * M
Ninv = N.I
elem = np.multiply(M, 2.0)
col = M[:, 0] + 1
a = np.asarray(N).ravel() / 2
# %%
print(type(N).__name__, type(col).__name__, N, col.T, a)
print((Ninv * N).round(10))
