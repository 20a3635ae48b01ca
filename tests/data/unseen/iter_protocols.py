"""x.flat, nditer, item, tolist, len, row iteration."""
import numpy as np

a = np.arange(12.0).reshape(3, 4) * 0.5
flat_sum = 0.0
for val in a.flat:
    flat_sum += val
it_sum = 0.0
for val in np.nditer(a):
    it_sum += float(val)
first = a.item(0)
as_list = a.tolist()
n_rows = len(a)
row_means = []
for row in a:
    row_means.append(row.mean())
col = [float(c.sum()) for c in a.T]
a.flat[::5] = -1.0
