# %%
import numpy as np
start = np.datetime64("2025-01-30")
# %% fuse
days = start + np.arange(5)
vals = np.arange(5.0) ** 2
elapsed = (days - start) / np.timedelta64(1, "D")
rate = np.gradient(vals, elapsed)
month_end = days.astype("datetime64[M]") + np.timedelta64(1, "M") - np.timedelta64(1, "D")
# %%
print(days, rate, month_end[-1], days.dtype)
