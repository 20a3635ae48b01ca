"""Element-by-element Python loops over small arrays (the style of a translated MATLAB script)."""
import numpy as np

n = 8
a = np.zeros(n)
for i in range(n):
    a[i] = i ** 2 - 3 * i
b = np.empty(n)
b[0] = 1.0
for i in range(1, n):
    b[i] = 0.5 * b[i - 1] + a[i]
m = np.zeros((n, n))
for i in range(n):
    for j in range(n):
        m[i, j] = 1.0 / (i + j + 1)
tr = 0.0
for i in range(n):
    tr += m[i, i]
fib = np.zeros(12, dtype=np.int64)
fib[:2] = 1
for k in range(2, 12):
    fib[k] = fib[k - 1] + fib[k - 2]
