# %%
import numpy as np
import functools

@functools.lru_cache(maxsize=None)
def window(n):
    return np.hanning(n) * 2

cache_hits = []
# %% fuse
x = np.linspace(0, 1, 32)
w = window(32)
tapered = x * w
again = window(32)
cache_hits.append(window.cache_info().hits)
# %%
w2 = window(32)
print(w2 is again, type(w2).__name__, (w2 * 1).sum().round(8), cache_hits)
