"""Word-like counting with np.unique(return_counts, return_index) and bincount with weights."""
import numpy as np

tokens = np.array([3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9])
vals, first, counts = np.unique(tokens, return_index=True, return_counts=True)
freq = counts / counts.sum()
entropy = -(freq * np.log2(freq)).sum()
most = vals[counts == counts.max()]
w = np.linspace(0, 1, tokens.size)
wsum = np.bincount(tokens, weights=w, minlength=10)
uniq_rows, inv = np.unique(np.array([[1, 2], [3, 4], [1, 2], [0, 0]]), axis=0, return_inverse=True)
dup = np.bincount(inv.ravel())
