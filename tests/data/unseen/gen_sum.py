"""Generator expressions with sum(), functions defined and called in loops, global statements."""
import numpy as np

counter = 0

def step(u, dt):
    global counter
    counter += 1
    return u + dt * (np.roll(u, 1) - 2 * u + np.roll(u, -1))

def energy(u):
    return float((u ** 2).sum())

u = np.exp(-np.linspace(-3, 3, 32) ** 2)
history = []
for _ in range(6):
    u = step(u, 0.1)
    history.append(energy(u))
total = sum(x * x for x in u)
total_arr = sum(u[k::4] for k in range(4))
mx = max(history)
pairs = sum((a - b) ** 2 for a, b in zip(u[:-1], u[1:]))
norms = [np.linalg.norm(u[:k]) for k in (4, 8, 16)]
