"""Functions that modify module globals (a step counter, a running buffer) with `global`."""
import numpy as np

calls = 0
history = np.zeros(5)
state = np.ones(4)

def step(dt):
    global calls, state
    calls += 1
    state = state * (1 - dt) + dt * np.arange(4.0)
    history[calls % 5] += state.sum()
    return state.max()

tops = [step(0.1) for _ in range(7)]

def reset():
    global history
    history = history * 0 - 1

last_before = history.copy()
reset()
