"""Binning: np.digitize, np.histogram with edges, np.unique(return_counts, return_inverse)."""
import numpy as np

rng = np.random.default_rng(11)
ages = rng.integers(0, 90, size=40)
edges = np.array([0, 18, 35, 50, 65, 90])
bucket = np.digitize(ages, edges[1:-1])
hist, hedges = np.histogram(ages, bins=edges)
vals, inv, cnt = np.unique(bucket, return_inverse=True, return_counts=True)
mean_age = np.array([ages[bucket == b].mean() for b in vals])
back = vals[inv]
wh, _ = np.histogram(ages, bins=5, weights=ages / 10.0, range=(0, 90))
dens, _ = np.histogram(ages.astype(float), bins=4, density=True)
