# %%
import numpy as np
u = np.zeros(20)
u[0] = 1.0
# %% fuse
for step in range(10):
    u[1:] = u[1:] + 0.5 * (u[:-1] - u[1:])
    if step == 4:
        raise KeyboardInterrupt
mass = u.sum()
# %%
print(step, u[:6].round(6))
