"""k-means with a list of centroids updated in a Python loop."""
import numpy as np

rng = np.random.default_rng(1)
pts = np.concatenate([rng.normal(c, 0.3, size=(20, 2)) for c in (0.0, 3.0, 6.0)])
cent = pts[[0, 20, 40]].copy()
for _ in range(5):
    d2 = ((pts[:, None, :] - cent[None, :, :]) ** 2).sum(-1)
    lab = d2.argmin(axis=1)
    cent = np.array([pts[lab == k].mean(axis=0) for k in range(3)])
inertia = float(d2.min(axis=1).sum())
sizes = np.bincount(lab, minlength=3)
