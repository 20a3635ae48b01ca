"""Growing and shrinking arrays: np.append, np.insert, np.delete, np.resize, trim_zeros."""
import numpy as np

x = np.arange(5.0)
x = np.append(x, [10.0, 11.0])
x = np.insert(x, 2, -1.0)
x = np.delete(x, [0, 4])
grid = np.arange(12.0).reshape(3, 4)
g2 = np.delete(grid, 1, axis=1)
g3 = np.insert(g2, 0, 9.0, axis=0)
g4 = np.append(g3, np.zeros((4, 1)), axis=1)
r = np.resize(x, (3, 3))
t = np.trim_zeros(np.array([0.0, 0.0, 1.0, 2.0, 0.0, 3.0, 0.0]))
acc = np.empty(0)
for k in range(4):
    acc = np.append(acc, k * x[:2])
