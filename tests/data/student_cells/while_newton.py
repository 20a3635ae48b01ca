# stresses: Newton's method on a whole array, `while` on a NumPy bool (a batch per
# iteration, a few dozen iterations on a large array).
# small: N=1000
import numpy as np

N = 2_000_000
a = np.linspace(1.0, 1e6, N)
x = a.copy()
while np.max(np.abs(x * x - a) / a) > 1e-12:
    x = 0.5 * (x + a / x)
root = x
