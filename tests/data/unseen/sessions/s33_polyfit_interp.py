# %%
import numpy as np
xs = np.array([0.0, 1, 2, 3, 4, 5])
ys = np.array([1.0, 2.7, 5.8, 6.6, 7.5, 9.9])
# %% fuse
coef = np.polyfit(xs, ys, 2)
fitted = np.polyval(coef, xs)
resid = ys - fitted
fine = np.linspace(0, 5, 11)
interp = np.interp(fine, xs, ys)
p = np.poly1d(coef)
deriv = p.deriv()(fine)
# %%
print(coef.round(6), np.abs(resid).max().round(6), interp[:4], deriv[-1].round(6))
