"""int8/int16 image kernels: Sobel with int16 accumulation, uint8 saturation, box blur // 9."""
import numpy as np

rng = np.random.default_rng(9)
img = rng.integers(0, 256, size=(10, 12), dtype=np.uint8)
p = np.pad(img.astype(np.int16), 1, mode="edge")
gx = (p[:-2, 2:] + 2 * p[1:-1, 2:] + p[2:, 2:]) - (p[:-2, :-2] + 2 * p[1:-1, :-2] + p[2:, :-2])
gy = (p[2:, :-2] + 2 * p[2:, 1:-1] + p[2:, 2:]) - (p[:-2, :-2] + 2 * p[:-2, 1:-1] + p[:-2, 2:])
mag = np.clip(np.abs(gx) + np.abs(gy), 0, 255).astype(np.uint8)
box = sum(p[1 + dy:p.shape[0] - 1 + dy, 1 + dx:p.shape[1] - 1 + dx] for dy in (-1, 0, 1) for dx in (-1, 0, 1)) // 9
box8 = box.astype(np.uint8)
small = (img // 16).astype(np.int8)
wrapped = small * np.int8(20)
diff = img.astype(np.int16) - box
bright = img + np.uint8(100)
thresh = (img > 128).astype(np.uint8) * 255
