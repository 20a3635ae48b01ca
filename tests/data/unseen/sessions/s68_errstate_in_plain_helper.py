# %%
import numpy as np
import warnings

def safe_log_ratio(a, b):
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.log(a / b)
    r[~np.isfinite(r)] = 0.0
    return r
# %% fuse
a = np.array([1.0, 0.0, 2.0, -1.0])
b = np.array([2.0, 1.0, 0.0, 1.0])
r = safe_log_ratio(a, b)
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    q = np.log(a)
msgs = [(str(x.message), x.lineno) for x in w]
# %%
print(r, msgs)
