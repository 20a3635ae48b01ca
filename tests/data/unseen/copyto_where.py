"""np.copyto with where=, np.putmask, np.place, masked fills."""
import numpy as np

x = np.linspace(-1, 1, 12)
y = np.zeros(12)
np.copyto(y, x, where=x > 0)
z = np.full(12, 9.0)
np.copyto(z, 0.0, where=np.abs(x) < 0.5)
p = x.copy()
np.putmask(p, p < 0, p ** 2)
q = x.copy()
np.place(q, q > 0.5, [7.0, 8.0])
m = np.arange(12).reshape(3, 4)
np.copyto(m, -m, where=(m % 3 == 0))
f = np.zeros(12, dtype=np.float32)
np.copyto(f, x, casting="same_kind")
