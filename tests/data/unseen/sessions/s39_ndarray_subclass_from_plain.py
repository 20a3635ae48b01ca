# %%
import numpy as np

class Tagged(np.ndarray):
    def __new__(cls, data, unit="m"):
        obj = np.asarray(data, dtype=float).view(cls)
        obj.unit = unit
        return obj

    def __array_finalize__(self, obj):
        self.unit = getattr(obj, "unit", "?")
# %% fuse
d = Tagged([1.0, 2.0, 4.0], unit="km")
twice = d * 2
total = d.sum()
plainv = np.asarray(d) + 1
unit = twice.unit
# %%
print(type(twice).__name__, unit, float(total), plainv)
