# A Laplacian image pyramid: 2x2 block means by reshape, nearest upsampling with repeat,
# band differences, clipping back to uint8, and reconstruction checked against the input
import numpy as np

rng = np.random.default_rng(5)
yy, xx = np.mgrid[0:256, 0:256]
img = (128 + 60 * np.sin(xx / 9.0) * np.cos(yy / 13.0) + rng.normal(0, 8, (256, 256)))
img = np.clip(img, 0, 255).astype(np.uint8)


def down(a):
    h, w = a.shape
    return a.reshape(h // 2, 2, w // 2, 2).mean(axis=(1, 3))


def up(a):
    return np.repeat(np.repeat(a, 2, axis=0), 2, axis=1)


levels = [img.astype(np.float64)]
for _ in range(4):
    levels.append(down(levels[-1]))
bands = [levels[i] - up(levels[i + 1]) for i in range(4)]
energy = [float((b ** 2).mean()) for b in bands]

rec = levels[-1]
for b in reversed(bands):
    rec = up(rec) + b
err = float(np.abs(rec - img).max())
out = np.clip(np.rint(rec), 0, 255).astype(np.uint8)
same = bool(np.array_equal(out, img))
thumb = levels[3].round().astype(np.uint8)
