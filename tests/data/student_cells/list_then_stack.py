# stresses: building a list of arrays in a loop, then np.stack (thousands of live
# temporaries end in one opaque-looking call).
# small: ROWS=40
import numpy as np

ROWS = 3_000
x = np.linspace(0.0, 1.0, 200)
rows = []
for k in range(ROWS):
    rows.append(np.cos(x * k) * np.exp(-x))
M = np.stack(rows)
col_means = M.mean(axis=0)
