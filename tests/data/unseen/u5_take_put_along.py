"""Top-k per row with argpartition, take_along_axis and put_along_axis."""
import numpy as np

rng = np.random.default_rng(2)
scores = rng.random((5, 7)) * 10
k = 3
idx = np.argpartition(-scores, k, axis=1)[:, :k]
top = np.take_along_axis(scores, idx, axis=1)
order = np.argsort(-top, axis=1)
idx_sorted = np.take_along_axis(idx, order, axis=1)
top_sorted = np.take_along_axis(scores, idx_sorted, axis=1)
marked = scores.copy()
np.put_along_axis(marked, idx_sorted, -1.0, axis=1)
mins = np.argmin(scores, axis=0)
np.put_along_axis(scores, mins[None, :], 0.0, axis=0)
norm = scores / scores.sum(axis=1, keepdims=True)
