# stresses: a loop that prints every iteration (each print reads the array: a batch
# per iteration, output interleaved with capture).
# small: STEPS=20
import numpy as np

STEPS = 400
x = np.linspace(0.0, 1.0, 1000)
for i in range(STEPS):
    x = np.sqrt(x + 1.0) - 0.5
    print(i, round(float(x.sum()), 6))
