# %%
import numpy as np

def describe(v):
    if isinstance(v, np.ndarray):
        return f"array{v.shape}"
    if type(v) is float or isinstance(v, np.floating):
        return "float"
    return type(v).__name__

def as_column(v):
    if type(v) is np.ndarray and v.ndim == 1:
        return v[:, None]
    return np.atleast_2d(v)

def kind_of(v):
    return v.__class__.__name__
# %% fuse
x = np.arange(4.0) * 2
kinds = [describe(x), describe(x.sum()), describe(3), kind_of(x), kind_of(x[1])]
col = as_column(x)
shape = col.shape
# %%
print(kinds, shape)
