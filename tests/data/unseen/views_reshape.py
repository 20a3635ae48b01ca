"""Views through reshape, ravel, transpose, swapaxes, newaxis, broadcast_to; writes through them."""
import numpy as np

a = np.arange(24.0)
m = a.reshape(4, 6)
m[1] = -1
r = m.ravel()
t = m.T
t[0, :] = 7
s = m.swapaxes(0, 1)[2]
s += 100
col = a[:, np.newaxis] * a[np.newaxis, :4]
bt = np.broadcast_to(a[:6], (3, 6))
bsum = bt.sum(axis=0)
e = np.expand_dims(a[:4], 0) + np.squeeze(np.ones((1, 4, 1)), axis=(0, 2))
mv = np.moveaxis(np.arange(24.0).reshape(2, 3, 4), 0, -1)
mv2 = mv * 2
flat = m.flatten()
flat[0] = 999
