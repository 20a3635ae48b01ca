# %%
import numpy as np
x = np.linspace(0.0, 1.0, 11)
steps = 0
# %% fuse
x = 0.5 * x + np.sin(x)
steps += 1
norm = np.linalg.norm(x)
# %% fuse
x = 0.5 * x + np.sin(x)
steps += 1
norm = np.linalg.norm(x)
# %%
print(steps, norm, x[-1])
