# %%
import numpy as np

def check_close(a, b):
    np.testing.assert_array_almost_equal(a, b, decimal=6)
    return True
# %% fuse
a = np.linspace(0, 1, 5)
ok = check_close(a * 2, a + a)
bad = check_close(a ** 2, a)
after = 1
# %%
print(ok)
