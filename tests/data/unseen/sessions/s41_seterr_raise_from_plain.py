# %%
import numpy as np
old = np.seterr(divide="raise")
den = np.array([2.0, 1.0, 0.0, 4.0])
out = []
# %% fuse
for k in range(len(den)):
    out.append(1.0 / den[: k + 1])
last = out[-1]
# %%
np.seterr(**old)
print(len(out), last)
