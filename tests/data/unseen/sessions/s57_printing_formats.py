# %%
import numpy as np
# %% fuse
x = np.array([1.0 / 3, 2.0 / 3, 1.25])
s = x.sum()
print(f"sum={s:.4f} first={x[0]:8.3e} all={x}")
print("%s | %r | %.2f" % (x, x[1:], s))
print(str(x * 2), repr(x.astype(np.float32)))
print(np.array2string(x, precision=2, separator=";"))
text = "{:.3f}".format(x.mean())
np.set_printoptions(precision=3)
print(x / 7)
np.set_printoptions(precision=8)
# %%
print(text)
