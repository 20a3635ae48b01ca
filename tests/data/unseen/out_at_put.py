"""out= arguments, np.add.at, np.put, np.roll, np.pad."""
import numpy as np

x = np.arange(10.0)
y = np.empty(10)
np.multiply(x, 2.0, out=y)
np.add(y, 1.0, out=y)
counts = np.zeros(5)
idx = np.array([0, 1, 1, 3, 3, 3, 4])
np.add.at(counts, idx, 1.0)
p = np.zeros(8)
np.put(p, [1, 3, 5], [9.0, 8.0, 7.0])
r = np.roll(x, 3)
r2 = np.roll(x.reshape(2, 5), -1, axis=1)
padded = np.pad(x[:4], 2, mode="edge")
padc = np.pad(np.ones((2, 2)), ((1, 0), (0, 1)), constant_values=5.0)
np.sqrt(x, out=x)
