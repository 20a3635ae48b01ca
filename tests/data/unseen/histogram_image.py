"""Image-like uint8 processing: histogram, cumulative LUT, threshold, boundary pixels set one by one."""
import numpy as np

rng = np.random.default_rng(8)
img = rng.integers(0, 256, size=(16, 16), dtype=np.uint8)
hist = np.bincount(img.ravel(), minlength=256)
cdf = hist.cumsum()
lut = ((cdf - cdf.min()) * 255 // (cdf.max() - cdf.min())).astype(np.uint8)
eq = lut[img]
binary = (eq > 128).astype(np.uint8) * 255
blur = img.astype(np.float32)
blur[1:-1, 1:-1] = (img[:-2, 1:-1].astype(np.float32) + img[2:, 1:-1] + img[1:-1, :-2] + img[1:-1, 2:]) / 4
blur[0, 0] = 0
blur[0, -1] = 0
blur[-1, 0] = 0
blur[-1, -1] = 0
diff = img.astype(np.int16) - eq
