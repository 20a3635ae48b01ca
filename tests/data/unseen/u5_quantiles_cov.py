"""Descriptive stats: quantile methods, weighted average, cov/corrcoef, ptp and standardisation."""
import numpy as np

rng = np.random.default_rng(21)
X = rng.normal(size=(50, 3)) @ np.array([[1.0, 0.5, 0.0], [0, 1, 0.3], [0, 0, 1]])
q = np.quantile(X, [0.1, 0.5, 0.9], axis=0, method="median_unbiased")
w = np.linspace(1, 2, 50)
wavg, wsum = np.average(X, axis=0, weights=w, returned=True)
C = np.cov(X, rowvar=False)
R = np.corrcoef(X.T)
rng_ = np.ptp(X, axis=0)
Z = (X - X.mean(axis=0)) / X.std(axis=0, ddof=1)
Z[np.abs(Z) > 2] = np.sign(Z[np.abs(Z) > 2]) * 2
med = np.median(Z, axis=0)
