"""Reductions with where= and initial=; nan-aware reductions."""
import numpy as np

x = np.linspace(-3, 3, 25).reshape(5, 5)
pos = x > 0
s = np.sum(x, where=pos)
s_ax = np.sum(x, axis=1, where=pos)
mx = np.max(x, axis=0, where=pos, initial=-10.0)
mn = np.min(x, initial=0.5)
prod = np.prod(x + 4, axis=1, where=pos, initial=1.0)
mean_w = np.mean(x, where=pos)
add_init = np.add.reduce(x, axis=0, initial=100.0)
y = x.copy()
y[1, 2] = np.nan
nm = np.nanmean(y, axis=1)
ns = np.nansum(y)
nmx = np.nanmax(y, axis=0)
cnt = np.count_nonzero(x > 1, axis=0)
anyv = np.any(x > 2.9, axis=1)
allv = np.all(x > -3.1)
