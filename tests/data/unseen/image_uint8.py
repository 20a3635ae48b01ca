"""Image code: uint8 arithmetic with wraparound, clip then astype, channel-last broadcasting, padding."""
import numpy as np

h, w = 12, 10
yy, xx = np.mgrid[0:h, 0:w]
img = np.stack([(xx * 25) % 256, (yy * 20) % 256, (xx + yy) * 7 % 256], axis=-1).astype(np.uint8)
brighter = img + np.uint8(100)            # wraps around
safe = np.clip(img.astype(np.int16) + 100, 0, 255).astype(np.uint8)
gain = np.array([1.2, 0.9, 1.1])
graded = np.clip(img * gain, 0, 255).astype(np.uint8)
gray = (img @ np.array([0.299, 0.587, 0.114])).astype(np.uint8)
inv = 255 - img
diff = img[..., 0] - img[..., 1]            # uint8 wraps
absdiff = np.abs(img[..., 0].astype(int) - img[..., 1])
padded = np.pad(gray, 2, mode="edge")
blur = (padded[1:-3, 2:-2] + padded[3:-1, 2:-2] + padded[2:-2, 1:-3] + padded[2:-2, 3:-1]) // 4
thresh = gray > gray.mean()
mean_rgb = img.reshape(-1, 3).mean(axis=0)
hist = np.bincount(gray.ravel(), minlength=256)[:8]
