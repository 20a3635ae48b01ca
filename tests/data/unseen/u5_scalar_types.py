"""NumPy scalars in Python code: item(), tolist(), int()/float() of array elements, math module on them, comparisons chains."""
import math
import numpy as np

x = np.linspace(0, 2, 9) ** 2
s = x.sum()
m = math.sqrt(s) + math.floor(x[3])
py = x.tolist()
it = x[2].item()
n = int(x.argmax()) + len(py)
ok = 0 < x[4] < 2
rounded = round(float(x.mean()), 3)
hsh = {float(v): i for i, v in enumerate(x[:3])}
frac = (x / s).astype(np.float32)
best = max(x[1:4], key=lambda v: -abs(v - 1))
lst = sorted(x[::-1][:4])
