"""Data-dependent control flow: if on sums, while on max, break/continue, for-else."""
import numpy as np

x = np.linspace(-1, 1, 11)
if x.sum() > 0:
    sign = "pos"
elif x.sum() < -1e-12:
    sign = "neg"
else:
    sign = "zero"
d = np.ones(5) * 8.0
n_halves = 0
while np.abs(d).max() > 0.1:
    d = d / 2
    n_halves += 1
found = None
for i, v in enumerate(x):
    if v < 0:
        continue
    if v > 0.5:
        found = i
        break
else:
    found = -1
for k in range(3):
    if (x * k).max() > 100:
        break
else:
    k_done = k
acc = np.zeros(3)
for row in np.arange(12.0).reshape(4, 3):
    if row.min() % 2:
        continue
    acc += row
flag = bool(np.any(x > 0.9)) and not np.all(x > -2)
