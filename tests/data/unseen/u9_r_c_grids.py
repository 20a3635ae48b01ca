# Index tricks: np.r_ and np.c_ building arrays, np.s_ slices kept in variables, np.ogrid and
# np.mgrid with complex steps, np.ix_ meshes, unravel_index of an argmax, where/argwhere unpacking
import numpy as np

v = np.r_[0:5, 10, 20:23, -1.5]
cols = np.c_[np.arange(4), np.arange(4) ** 2, np.ones(4)]
stacked = np.r_["0,2", [1, 2, 3], [4, 5, 6]]
sl = np.s_[1:-1, ::2]
X, Y = np.mgrid[-1:1:9j, 0:2:5j]
field = np.exp(-(X ** 2 + Y ** 2))
inner = field[sl]
oy, ox = np.ogrid[0:6, 0:7]
dist = np.hypot(oy - 2.5, ox - 3.0)
peak = np.unravel_index(np.argmax(field), field.shape)
rows, cols_idx = np.where(dist < 2.0)
pts = np.argwhere(dist < 1.5)
sub = dist[np.ix_([0, 2, 4], [1, 3, 5])]
flat_idx = np.ravel_multi_index((rows, cols_idx), dist.shape)
chk = float(field[peak]) + float(sub.sum()) + int(flat_idx.sum())
