# %%
import numpy as np
# %% fuse
def normalise(v, eps=1e-12):
    m = v.mean(axis=0)
    s = v.std(axis=0) + eps
    return (v - m) / s
data = np.arange(12.0).reshape(4, 3) ** 1.5
z = normalise(data)
offset = np.ones(3) * 5
shifted = lambda v: normalise(v) + offset
# %%
print(normalise(np.eye(3)), shifted(data)[0], type(shifted(data)).__name__, z[0])
