"""An image pipeline in float32 with Python scalar constants, uint8 output and gamma correction."""
import numpy as np

img = (np.arange(64, dtype=np.uint8).reshape(8, 8) * 4)
f = img.astype(np.float32) / 255.0
g = f ** (1 / 2.2)
blur = f.copy()
blur[1:-1, 1:-1] = (f[:-2, 1:-1] + f[2:, 1:-1] + f[1:-1, :-2] + f[1:-1, 2:]) * 0.25
sharp = np.clip(f + 0.5 * (f - blur), 0.0, 1.0)
out = (sharp * 255 + 0.5).astype(np.uint8)
mean = sharp.mean()
hist = np.bincount(out.ravel() // 32, minlength=8)
lum = 0.299 * f + 0.587 * g + 0.114 * blur
kinds = (g.dtype, lum.dtype, mean.dtype)
