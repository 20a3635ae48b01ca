"""Statistics: percentiles, median, weighted averages, ddof, covariance with weights."""
import numpy as np

rng = np.random.default_rng(3)
data = rng.gamma(2.0, 1.5, size=(40, 3))
med = np.median(data, axis=0)
p = np.percentile(data, [5, 50, 95], axis=0)
q = np.quantile(data[:, 1], 0.9, method="nearest")
wts = np.arange(1, 41, dtype=float)
wavg = np.average(data, axis=0, weights=wts)
wavg2, wsum = np.average(data[:, 0], weights=wts, returned=True)
s0 = data.std(axis=0)
s1 = np.std(data, axis=0, ddof=1)
var = data.var()
c = np.cov(data.T)
cc = np.corrcoef(data[:, 0], data[:, 2])[0, 1]
iqr = p[2] - p[0]
trimmed = np.sort(data, axis=0)[2:-2].mean(axis=0)
mad = np.median(np.abs(data - med), axis=0)
