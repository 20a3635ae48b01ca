# %%
import numpy as np
# %% fuse
vals = np.array([1.5, 2.5, 1.5, 3.0])
uniq = set(vals)
counts = {}
for v in vals:
    counts[v] = counts.get(v, 0) + 1
best = max(counts, key=counts.get)
as_floats = sorted(float(v) for v in uniq)
# %%
print(sorted(uniq), counts, best, type(best).__name__, as_floats)
