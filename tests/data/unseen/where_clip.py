"""np.where chains, np.clip and np.select-like piecewise functions."""
import numpy as np

x = np.linspace(-3, 3, 61)
y = np.where(x < -1, -1.0, np.where(x > 1, 1.0, x ** 3))
z = np.clip(x * 2.5, -4, 4)
relu = np.maximum(x, 0)
leaky = np.where(x > 0, x, 0.01 * x)
piece = np.piecewise(x, [x < 0, x >= 0], [lambda t: t ** 2, lambda t: np.sqrt(t)])
clipped_count = int((np.abs(x * 2.5) > 4).sum())
out = np.empty_like(x)
np.clip(x, -0.5, 0.5, out=out)
stats = (y.mean(), z.std(), float(leaky.min()))
