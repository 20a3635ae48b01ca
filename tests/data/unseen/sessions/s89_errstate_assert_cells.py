# %%
import numpy as np
v = np.array([2, 0, -3, 4], dtype=np.int64)
# %% fuse
with np.errstate(divide="ignore", invalid="ignore"):
    q = 10 // v
    r = np.float64(1.0) / v
    big = np.int64(2**62) * np.int64(3) + v * 0
assert np.isinf(r[1])
assert np.allclose(q[[0, 2, 3]], [5, -4, 2])
# %%
print(q, r, big)
with np.errstate(all="raise"):
    try:
        print(1.0 / v)
    except FloatingPointError as e:
        print("caught", e)
