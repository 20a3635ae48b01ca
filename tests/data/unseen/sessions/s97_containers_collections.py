# %%
import numpy as np
from collections import deque, defaultdict, OrderedDict, namedtuple
Pair = namedtuple("Pair", "lo hi")
# %% fuse
x = np.linspace(0, 1, 6)
hist = deque(maxlen=3)
for k in range(5):
    hist.append(x * k)
groups = defaultdict(list)
for v in x:
    groups[int(v * 2)].append(v * 10)
od = OrderedDict(first=x[:2] + 1, second=x[2:] - 1)
p = Pair(x.min(), x.max() * 2)
bounds = Pair(lo=x[:3] * 1, hi=x[3:] * 1)
# %%
print(len(hist), hist[0], dict(groups), list(od), od["first"], p, bounds.lo)
print(type(hist[-1]).__name__, type(groups[0][0]).__name__, type(bounds.hi).__name__, type(p.lo).__name__)
