"""np.where / select / choose / clip dtype corners: ints with Python floats, bools with ints, clip of ints."""
import numpy as np

i = np.arange(-5, 5)
w1 = np.where(i > 0, i, 0.5)
w2 = np.where(i > 0, i, 0)
w3 = np.where(i > 0, True, i)
w4 = np.where(i % 2 == 0, np.float32(1), np.float32(-1))
c1 = np.clip(i, 0.5, 2.5)
c2 = np.clip(i, -2, 2)
c3 = i.clip(min=0)
sel = np.select([i < -2, i > 2], [i * 10, i * 100], default=-1)
ch = np.choose(np.abs(i) % 3, [i, -i, i * i])
mx = np.maximum(i, 0.5)
mn = np.minimum(i.astype(np.int8), np.int8(2))
