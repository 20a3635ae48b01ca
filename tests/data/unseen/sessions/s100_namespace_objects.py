# %%
import numpy as np
import types
def f():
    return 1
cfg = types.SimpleNamespace(lr=0.5)
# %% fuse
cfg.w = np.ones(3) * cfg.lr
cfg.hist = [cfg.w * 2]
f.cache = np.arange(3.0) ** 2
box = {"inner": types.SimpleNamespace(v=np.zeros(2) + 7)}
# %%
print(cfg.w, cfg.hist, f.cache, box["inner"].v, type(cfg.w).__name__, type(f.cache).__name__,
      type(box["inner"].v).__name__)
