# stresses: appending a reduction to a Python list each iteration (a float per
# iteration, thousands of iterations).
# small: STEPS=100
import numpy as np

STEPS = 5_000
x = np.linspace(0.0, np.pi, 500)
energies = []
for k in range(STEPS):
    energies.append(float(np.sum(np.sin(x * (k % 7)) ** 2)))
best = max(energies)
