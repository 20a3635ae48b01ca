# stresses: a long element-wise loop on a large array (fresh allocation every step):
# capture stops on time before the instruction cap.
# small: N=5_000 STEPS=40
import numpy as np

N = 1_000_000
STEPS = 500
x = np.linspace(0.0, 1.0, N)
for step in range(STEPS):
    x = x * 0.99 + 0.01 * np.sin(x)
total = x.sum()
