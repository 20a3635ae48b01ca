# %%
import numpy as np
import functools
from scipy import ndimage
calls = []

def logged(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        calls.append(fn.__name__)
        return fn(*args, **kwargs)
    return wrapper

@logged
def blur(img, s):
    return ndimage.gaussian_filter(img, s)
# %% fuse
img = np.zeros((9, 9))
img[4, 4] = 1.0
out = blur(img * 3, 1.0)
peak = out.max()
# %%
print(calls, peak.round(10), out.sum().round(10))
