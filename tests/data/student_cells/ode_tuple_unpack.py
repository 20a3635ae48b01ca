# stresses: a predator-prey Euler integration with tuple unpacking of two arrays and a
# history list of copies.
# small: STEPS=40
import numpy as np

STEPS = 10_000
prey, pred = np.full(50, 10.0), np.linspace(1.0, 5.0, 50)
dt = 0.001
history = []
for t in range(STEPS):
    prey, pred = (prey + dt * (1.1 * prey - 0.4 * prey * pred),
                  pred + dt * (0.1 * prey * pred - 0.4 * pred))
    if t % 1000 == 0:
        history.append(prey.copy())
