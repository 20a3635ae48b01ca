# %%
import numpy as np

def my_softmax(z):
    e = np.exp(z - z.max())
    return e / e.sum()
# %% fuse
z = np.array([1.0, 2.0, 3.0])
p = my_softmax(z)
np.testing.assert_allclose(p.sum(), 1.0)
np.testing.assert_array_equal(np.argsort(p), [0, 1, 2])
checked = True
np.testing.assert_allclose(p, [0.1, 0.2, 0.7], rtol=1e-3)
after = p * 2
# %%
print(checked, p.round(6))
