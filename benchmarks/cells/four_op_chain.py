import numpy as np
a = np.arange(1_000_000.)
b = a * 2.0
c = b + 1.0
d = np.sqrt(c)
total = d.sum()
