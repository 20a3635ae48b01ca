"""0-d arrays and NumPy scalars kept as results; item(), float(), shapes ()."""
import numpy as np

x = np.linspace(1, 2, 8)
s = x.sum()
z0 = np.array(3.5)
z1 = z0 * 2
z2 = np.asarray(x.mean())
d = np.dot(x, x)
f = float(s)
it = x[3].item()
sc = np.float32(1.5) * x[0]
i = np.int64(7) // 2
arr0 = np.zeros(())
arr0[()] = 4.0
arr0 += 1
prod0 = np.multiply(z0, z0)
mean0 = np.mean(z0)
sq = np.sqrt(np.float64(2.0))
cmp = x.max() > 1.5
nd = np.ndim(z0)
