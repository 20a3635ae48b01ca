# %%
import numpy as np

def step(u):
    return u + 0.1 * np.roll(u, 1) - 0.1 * u
# %% fuse
u = np.arange(8.0)
for _ in range(3):
    u = step(u)
# %%
def step(u):
    return u * 0.5
u2 = step(u)
# %% fuse
for _ in range(2):
    u = step(u)
final = u.sum()
# %%
print(final, u2[:3])
