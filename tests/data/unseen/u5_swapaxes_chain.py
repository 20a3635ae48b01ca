"""A 3-D volume: swapaxes, moveaxis and transposes written through, then reduced."""
import numpy as np

vol = np.fromfunction(lambda i, j, k: i + 10 * j + 100 * k, (3, 4, 5))
s = vol.swapaxes(0, 2)
s[0] = s[0] * -1
m = np.moveaxis(vol, 1, 0)
m[:, 0, :] += 0.25
tr = vol.transpose(2, 0, 1)
energy = (tr ** 2).sum(axis=(1, 2))
slab = vol[:, ::2, 1:4].copy(order="F")
slab /= slab.max()
total = float(vol.sum())
