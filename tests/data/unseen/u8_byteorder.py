# A FITS-style image: big-endian int16 pixels after a header, scaled by BSCALE and BZERO,
# a big-endian float32 weight map, background subtraction and a weighted centroid
import numpy as np

rows, cols = 120, 160
yy, xx = np.mgrid[0:rows, 0:cols]
counts = (400 * np.exp(-((xx - 90.5) ** 2 + (yy - 60.25) ** 2) / 50.0) + 20).astype(">i2")
header = b"SIMPLE  =                    T" + b" " * 2849
blob = header + counts.tobytes() + np.full(rows * cols, 0.5, dtype=">f4").tobytes()
start = len(header)
pixels = np.frombuffer(blob, dtype=">i2", count=rows * cols, offset=start).reshape(rows, cols)
weights = np.frombuffer(blob, dtype=">f4", offset=start + pixels.nbytes).reshape(rows, cols)
bscale, bzero = 1.5, 32768.0
image = pixels * bscale + bzero
background = np.median(image)
signal = np.clip(image - background, 0, None) * weights
total = signal.sum()
cy = (signal * yy).sum() / total
cx = (signal * xx).sum() / total
native = image.astype(image.dtype.newbyteorder("="))
