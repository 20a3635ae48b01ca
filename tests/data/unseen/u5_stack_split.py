"""Splitting and re-stacking: array_split, hsplit/vsplit, dstack, column_stack, concatenate with axis=None."""
import numpy as np

x = np.arange(24.0).reshape(4, 6)
parts = np.array_split(x, 4, axis=1)
left, right = np.hsplit(x, 2)
top, bottom = np.vsplit(x * 2, [1])
left *= -1
d = np.dstack([top, top + 1])
cs = np.column_stack([x[:, 0], x[:, -1], np.arange(4)])
flat = np.concatenate([x, x[:2]], axis=None)
re = np.concatenate(parts[::-1], axis=1)
stk = np.stack([left, right], axis=-1).sum(axis=-1)
