# %%
import numpy as np
counter = np.zeros(1)
# %% fuse
counter += 1
scaled = counter * 3
if counter[0] > 1:
    raise RuntimeError(f"ran {int(counter[0])} times")
# %% fuse
counter += 1
scaled = counter * 3
if counter[0] > 1:
    raise RuntimeError(f"ran {int(counter[0])} times")
# %%
print(counter, scaled)
