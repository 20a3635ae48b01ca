"""Open grids (np.ogrid) broadcast into a potential field; mgrid with complex steps."""
import numpy as np

yy, xx = np.ogrid[-2:2:41j, -3:3:61j]
r2 = xx ** 2 + yy ** 2
phi = np.exp(-r2) * np.cos(3 * xx)
phi[r2 > 4] = 0.0
gy, gx = np.gradient(phi, yy[:, 0], xx[0])
mag = np.sqrt(gx ** 2 + gy ** 2)
X, Y = np.mgrid[0:1:5j, 0:2:3j]
Z = X * Y + X
peak = np.unravel_index(mag.argmax(), mag.shape)
