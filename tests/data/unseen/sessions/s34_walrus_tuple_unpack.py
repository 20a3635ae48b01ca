# %%
import numpy as np
threshold = 0.7
# %% fuse
vals = np.sin(np.arange(20.0))
if (n_hi := int((vals > threshold).sum())) > 2:
    hi = vals[vals > threshold]
lo, mid, top = np.percentile(vals, [10, 50, 90])
(q, r) = np.divmod(np.arange(10), 3)
i, j = np.unravel_index(np.argmax(vals.reshape(4, 5)), (4, 5))
# %%
print(n_hi, hi.round(6), lo.round(6), q, r, i, j)
