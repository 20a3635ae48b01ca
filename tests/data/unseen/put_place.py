"""np.put, np.place, np.putmask, np.copyto with where, and take/put along axis."""
import numpy as np

a = np.arange(10.0)
np.put(a, [0, 3, 3, 9], [-1.0, -2.0, -3.0, -4.0])
b = np.arange(8.0)
np.place(b, b > 4, [10.0, 20.0])
c = np.linspace(0, 1, 7)
np.putmask(c, c > 0.5, c * 100)
d = np.zeros(6)
np.put(d, [1, 7], [5.0, 6.0], mode="wrap")
m = np.arange(12.0).reshape(3, 4)
idx = np.argsort(-m, axis=1)
top = np.take_along_axis(m, idx[:, :2], axis=1)
np.put_along_axis(m, idx[:, :1], 0.0, axis=1)
t = np.take(a, [1, -1, 12], mode="clip")
