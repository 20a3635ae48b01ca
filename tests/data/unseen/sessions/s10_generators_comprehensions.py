# %%
import numpy as np

def windows(a, width):
    for i in range(0, len(a) - width + 1, width):
        yield a[i:i + width]
# %% fuse
series = np.cumsum(np.ones(24) * 0.25)
means = [w.mean() for w in windows(series, 6)]
sq = {i: w ** 2 for i, w in enumerate(windows(series, 8))}
gen = (w - w.mean() for w in windows(series * 2, 4))
first = next(gen)
kept = [w for w in windows(series, 12)]
# %%
second = next(gen)
print(len(means), sorted(sq), second, kept[1][-1])
