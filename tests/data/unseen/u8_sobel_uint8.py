# Sobel edges of a synthetic uint8 image: int16 gradients from shifted slices, magnitude
# with hypot, orientation with arctan2, a threshold and a clipped uint8 output
import numpy as np

h, w = 240, 320
yy, xx = np.mgrid[0:h, 0:w]
img = ((np.sin(xx / 17.0) * np.cos(yy / 11.0) + 1.0) * 127.5).astype(np.uint8)
img[100:140, 150:200] = 255
f = img.astype(np.int16)
gx = (f[:-2, 2:] + 2 * f[1:-1, 2:] + f[2:, 2:]) - (f[:-2, :-2] + 2 * f[1:-1, :-2] + f[2:, :-2])
gy = (f[2:, :-2] + 2 * f[2:, 1:-1] + f[2:, 2:]) - (f[:-2, :-2] + 2 * f[:-2, 1:-1] + f[:-2, 2:])
mag = np.hypot(gx, gy)
theta = np.arctan2(gy, gx)
edges = np.zeros_like(img)
edges[1:-1, 1:-1] = np.clip(mag / mag.max() * 255.0, 0, 255).astype(np.uint8)
strong = edges > 128
direction = np.where(strong[1:-1, 1:-1], np.round(theta / (np.pi / 4)) % 4, -1).astype(np.int8)
n_strong = int(strong.sum())
