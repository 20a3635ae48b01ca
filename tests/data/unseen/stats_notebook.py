"""Data-science notebook style: standardise, covariance, correlation, z-scores."""
import numpy as np

rng = np.random.default_rng(42)
X = rng.normal(size=(50, 4)) * np.array([1.0, 2.0, 0.5, 3.0]) + np.array([0, 1, 2, 3])
mu = X.mean(axis=0)
sd = X.std(axis=0, ddof=1)
Z = (X - mu) / sd
cov = np.cov(X, rowvar=False)
corr = np.corrcoef(X.T)
outliers = np.abs(Z) > 2
n_out = outliers.sum(axis=0)
report = ", ".join(f"{m:.2f}" for m in mu)
qs = np.quantile(X[:, 0], [0.25, 0.5, 0.75])
