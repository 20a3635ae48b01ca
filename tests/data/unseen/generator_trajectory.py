"""From notebook session s60_generator_helper_stack: its cells as one script."""
import numpy as np

def trajectory(x0, v, dt, n):
    x = x0.copy()
    for _ in range(n):
        x = x + v * dt
        yield x
path = np.stack(list(trajectory(np.zeros(2), np.array([1.0, 0.5]), 0.1, 6)))
speeds = np.linalg.norm(np.diff(path, axis=0), axis=1)
pending = trajectory(path[-1], np.ones(2), 1.0, 3)
nxt = next(pending)
