# %%
import numpy as np
# %% fuse
rows = np.arange(12.0).reshape(4, 3) * 2
it = iter(rows)
first = next(it)
en = enumerate(rows[:, 0] + 1)
head = next(en)
zp = zip(rows[0] * 1, rows[1] * 1)
m = map(np.sum, [rows[2] * 1, rows[3] * 1])
# %%
print(first, next(it), head, next(en), list(zp), list(m))
