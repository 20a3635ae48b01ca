# %%
import numpy as np
def batches(arr, k):
    for i in range(0, len(arr), k):
        yield arr[i:i + k]
src = np.linspace(0, 1, 10)
# %% fuse
sums = [s for b in batches(src * 2, 3) if (s := b.sum()) > 1]
it = batches(src + 1, 4)
first = next(it)
squares = np.array([v ** 2 for v in src[:4]])
gen_total = sum(x.max() for x in batches(src, 5))
# %%
print(sums, first, squares, gen_total, next(it))
