"""apply_along_axis, object arrays, np.fromfunction, np.frompyfunc accumulate, np.piecewise."""
import numpy as np

m = np.arange(12.0).reshape(3, 4)
rng_row = np.apply_along_axis(lambda r: r.max() - r.min(), 1, m)
norm_rows = np.apply_along_axis(lambda r: r / r.sum() if r.sum() else r, 1, m)
ff = np.fromfunction(lambda i, j: i * 10 + j, (3, 4))
obj = np.array([np.arange(2.0), np.arange(3.0)], dtype=object)
lens = np.array([len(o) for o in obj])
x = np.linspace(-2, 2, 9)
pw = np.piecewise(x, [x < 0, x >= 0], [lambda v: -v, lambda v: v ** 2])
tri = np.triu(m[:, :3]) + np.tril(m[:, :3], -1) * 0.5
dg = np.diag(np.diag(m[:, :3]))
tr = np.trace(m[:, :3])
