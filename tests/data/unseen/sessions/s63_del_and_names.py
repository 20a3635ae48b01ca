# %%
import numpy as np
tmp = np.ones(3)
keep = np.zeros(2)
# %% fuse
big = tmp * 5
del tmp
keep += big[:2]
scratch = [np.ones(1)]
del scratch[0]
# %%
print("tmp" in dir(), keep, scratch)
print(tmp)
