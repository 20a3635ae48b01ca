"""NEP 50: float32 arrays with Python floats and NumPy float64 scalars; int32 with Python ints."""
import numpy as np

x = np.linspace(0, 1, 33, dtype=np.float32)
a = x * 0.1 + 1e-3
b = x * np.float64(0.1)
c = x / 3.0 - x ** 2 * 0.7
d = np.float32(2.5) * x + 1
i = np.arange(20, dtype=np.int32)
j = i + 7
k = i * 1000003
m = i * 2.5
n = i // 3 + i % 4
e = np.exp(x * 2.0) - 1.0
s = float(c.sum())
