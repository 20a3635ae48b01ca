# %%
import numpy as np
acc = np.zeros(4)
# %% fuse
%timeit -n 3 -r 1 acc += 1
res = acc * 2
# %%
print(acc, res)
