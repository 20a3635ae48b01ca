# stresses: a dictionary of arrays updated in place in a loop (leap-frog of a particle
# set), 5,000 steps.
# small: STEPS=50
import numpy as np

STEPS = 5_000
state = {"pos": np.linspace(-1.0, 1.0, 256), "vel": np.zeros(256)}
dt = 0.01
for _ in range(STEPS):
    state["vel"] -= dt * state["pos"]
    state["pos"] += dt * state["vel"]
energy = float(0.5 * (state["vel"] ** 2 + state["pos"] ** 2).sum())
