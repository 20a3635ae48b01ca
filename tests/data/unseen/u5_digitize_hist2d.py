"""A 2-D histogram of points, digitize into bins with right=True, and cumulative shares."""
import numpy as np

rng = np.random.default_rng(4)
x = rng.normal(0, 1, 300)
y = 0.5 * x + rng.normal(0, 0.5, 300)
H, xe, ye = np.histogram2d(x, y, bins=(6, 5), range=[[-3, 3], [-2.5, 2.5]])
share = H / H.sum()
cum = np.cumsum(share.ravel()).reshape(share.shape)
bins = np.linspace(-3, 3, 7)
ix = np.digitize(x, bins, right=True)
counts = np.bincount(ix, minlength=8)
centers = 0.5 * (xe[1:] + xe[:-1])
mean_y = np.array([y[ix == k].mean() if np.any(ix == k) else np.nan for k in range(1, 7)])
dens, edges = np.histogram(x, bins=12, density=True)
area = (dens * np.diff(edges)).sum()
