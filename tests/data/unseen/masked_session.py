"""From notebook session s12_masked_arrays: its cells as one script."""
import numpy as np
raw = np.array([3.0, -999.0, 4.5, 2.0, -999.0, 7.0, 1.0, 8.5])
data = np.ma.masked_equal(raw, -999.0)
mean = data.mean()
scaled = data * 2 + 1
filled = scaled.filled(0.0)
anoms = data - data.mean()
count = data.count()
