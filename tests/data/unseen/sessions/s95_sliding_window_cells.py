# %%
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
series = np.cumsum(np.ones(12)) ** 1.5
# %% fuse
win = sliding_window_view(series, 4)
ma = win.mean(axis=1)
series[0] = -100.0
dev = series[3:] - ma
# %%
print(win[0], ma[:3], dev[:3], win.flags.writeable)
