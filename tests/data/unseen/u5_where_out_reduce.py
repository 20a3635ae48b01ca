"""Reductions with where= and initial=, ufuncs with out= and where= into preallocated buffers."""
import numpy as np

x = np.linspace(-1, 2, 16).reshape(4, 4)
pos_sum = np.sum(x, where=x > 0)
row_max = np.max(x, axis=1, where=x < 1.5, initial=-10.0)
mean_pos = np.mean(x, axis=0, where=x > 0)
buf = np.zeros_like(x)
np.exp(x, out=buf, where=x > 0.5)
np.negative(buf, out=buf, where=buf == 0)
prod = np.prod(x + 2, axis=0, where=x < 1)
out = np.empty(4)
np.add.reduce(x, axis=1, out=out)
clipped = np.empty_like(x)
np.clip(x, -0.5, 1.0, out=clipped)
np.clip(x, 0, 1, out=x)
