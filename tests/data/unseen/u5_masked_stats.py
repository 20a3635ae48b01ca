"""Sensor readings with a masked array: invalid values masked, filled, and statistics along axes."""
import numpy as np

raw = np.array([[1.0, -999, 3.0, 4.0], [2.0, 2.5, -999, -999], [0.5, 1.5, 2.5, 3.5]])
ma = np.ma.masked_equal(raw, -999)
ma = ma * 2 + 1
col_mean = ma.mean(axis=0)
row_count = ma.count(axis=1)
filled = ma.filled(np.nan)
ma[0, 0] = np.ma.masked
clipped = np.ma.clip(ma, 2, 7)
anom = ma - ma.mean()
total = float(ma.sum())
valid = np.ma.masked_where(raw < 1, raw)
compressed = valid.compressed() ** 2
