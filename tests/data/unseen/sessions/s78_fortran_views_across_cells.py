# %%
import numpy as np
F = np.asfortranarray(np.arange(12.0).reshape(3, 4))
col = F[:, 2]
flatF = F.reshape(-1, order="F")
# %% fuse
F *= 2
col += 100
flatF[:3] = -1
G = F.T @ F
# %%
print(F.flags["F_CONTIGUOUS"], col, flatF[:5], G.trace())
