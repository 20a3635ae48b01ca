# %%
import numpy as np
transforms = {
    "log": lambda a: np.log1p(a),
    "sqrt": np.sqrt,
    "z": lambda a: (a - a.mean()) / a.std(),
}
# %% fuse
data = np.array([1.0, 4.0, 9.0, 16.0, 25.0])
out = {k: f(data) for k, f in transforms.items()}
stacked = np.vstack(list(out.values()))
col_means = stacked.mean(axis=1)
# %%
print(sorted(out), col_means.round(6), out["z"].sum().round(10))
