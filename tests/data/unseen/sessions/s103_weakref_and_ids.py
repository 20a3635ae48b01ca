# %%
import numpy as np
import weakref
keep = np.arange(5.0)
# %% fuse
r = weakref.ref(keep)
view = keep[1:4]
view *= 10
ok = r() is keep
same_mem = np.shares_memory(view, keep)
b = view.base is keep
# %%
print(ok, same_mem, b, keep, r() is keep)
