"""np.ma masked arrays and plain masks side by side."""
import numpy as np

data = np.array([1.0, -999.0, 3.0, 4.0, -999.0, 6.0])
m = np.ma.masked_equal(data, -999.0)
mean = m.mean()
filled = m.filled(0.0)
scaled = m * 2 + 1
valid = data[data != -999.0]
mean_plain = valid.mean()
logm = np.ma.log(np.ma.masked_less_equal(data, 0))
