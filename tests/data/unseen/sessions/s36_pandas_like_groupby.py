# %%
import numpy as np
groups = np.array([0, 1, 0, 2, 1, 0, 2, 2])
# %% fuse
vals = np.arange(8.0) ** 2
sums = np.bincount(groups, weights=vals)
counts = np.bincount(groups)
means = sums / counts
uniq, inv = np.unique(groups, return_inverse=True)
centered = vals - means[inv]
table = {int(g): vals[groups == g] for g in uniq}
# %%
print(means, centered.sum().round(10), {k: v.tolist() for k, v in table.items()})
