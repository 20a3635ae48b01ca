# %%
import numpy as np
a = np.arange(10.0)
v = a[2:5]
d = {"k": a, "hist": []}
# %% fuse
v *= 10
d["k"] = d["k"] + 1
d["hist"].append(a.copy())
a[0] = -1
np.add(a, 0.5, out=a)
x = a.sum()
b = a[20]
never = 1
# %%
print(a, v, d["k"], len(d["hist"]), x)
