# %%
import numpy as np
history = []
totals = np.zeros(4)
config = {"scale": 2.0, "seen": 0}
# %% fuse
for k in range(3):
    totals += np.arange(4.0) * config["scale"]
    history.append(totals.copy())
config["seen"] += len(history)
config["last"] = totals[-1]
# %%
print(len(history), totals, config)
