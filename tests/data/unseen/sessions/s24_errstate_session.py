# %%
import numpy as np
import warnings
x = np.array([-1.0, 0.0, 1.0, 4.0])
# %% fuse
with np.errstate(divide="ignore", invalid="ignore"):
    lg = np.log(x)
    inv = 1 / x
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    r = np.sqrt(x)
messages = [str(w.message) for w in caught]
lines = [w.lineno for w in caught]
clean = np.nan_to_num(lg, neginf=-50.0)
# %%
print(messages, lines, clean)
