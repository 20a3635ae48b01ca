"""np.memmap on a temporary file: written, flushed, reopened read-only and computed with."""
import os
import tempfile
import numpy as np

d = tempfile.mkdtemp()
path = os.path.join(d, "data.bin")
mm = np.memmap(path, dtype=np.float64, mode="w+", shape=(4, 5))
mm[:] = np.arange(20.0).reshape(4, 5)
mm[1] *= 3
mm.flush()
ro = np.memmap(path, dtype=np.float64, mode="r", shape=(4, 5))
col = np.asarray(ro[:, 2]) * 2
total = float(ro.sum())
scaled = np.array(ro) / ro.max()
del mm, ro
os.remove(path)
os.rmdir(d)
del d, path
