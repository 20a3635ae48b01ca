# %%
import numpy as np
data = np.arange(10.0)
# %% fuse
tmp = data ** 2
total = tmp.sum()
del tmp
data = data[::-1] + 1
alias = data
del data
x = alias * 2
# %%
print("tmp" in globals(), "data" in globals(), total, x[:3])
data = alias
# %%
print(data is alias)
