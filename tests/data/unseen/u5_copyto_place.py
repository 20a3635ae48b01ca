"""np.copyto with where= and casting, np.place, np.put with mode='wrap' and 'clip', np.putmask."""
import numpy as np

dst = np.zeros((3, 4))
src = np.arange(12.0).reshape(3, 4)
np.copyto(dst, src * 2, where=src % 3 == 0)
ints = np.zeros(4, dtype=np.int32)
np.copyto(ints, np.array([1.7, -2.2, 3.9, 4.0]), casting="unsafe")
a = np.arange(10.0)
np.place(a, a > 6, [-1.0, -2.0])
b = np.arange(6.0)
np.put(b, [7, -1, 20], [100.0, 200.0, 300.0], mode="wrap")
c = np.arange(6.0)
np.put(c, [7, -9], [5.0, 6.0], mode="clip")
d = np.linspace(0, 1, 8)
np.putmask(d, d > 0.5, d ** 2)
row = np.copy(dst[1])
np.copyto(row, 7.0)
