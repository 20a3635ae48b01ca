# %%
import numpy as np
words = ["alpha", "beta", "gamma", "delta"]
# %% fuse
arr = np.array(words)
upper = np.char.upper(arr)
lengths = np.char.str_len(arr)
long_ones = arr[lengths > 4]
obj = np.empty(3, dtype=object)
obj[0] = [1, 2]
obj[1] = np.arange(3.0) * 2
obj[2] = "x"
sizes = np.array([len(o) for o in obj])
joined = np.char.add(arr, "_1")
# %%
print(upper, long_ones, sizes, obj[1] + 1, joined[-1])
