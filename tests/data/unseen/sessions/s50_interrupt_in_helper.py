# %%
import numpy as np
log = []

def relax(u, sweeps):
    for s in range(sweeps):
        u[1:-1] = 0.5 * (u[:-2] + u[2:])
        log.append(float(u.sum()))
        if s == 2:
            raise KeyboardInterrupt
    return u
u = np.linspace(0, 1, 10) ** 2
# %% fuse
v = relax(u, 5)
w = v * 2
# %%
print(log, u.round(8), "v" in dir())
