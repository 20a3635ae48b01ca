# %%
import numpy as np
acc = np.zeros(3)
count = 0
def push(v):
    global acc, count
    acc = acc + v
    count += 1
def push_inplace(v):
    acc[:] += v
# %% fuse
for k in range(3):
    push(np.arange(3.0) * k)
push_inplace(np.ones(3))
snapshot = acc * 1
# %%
print(acc, count, snapshot, type(acc).__name__)
