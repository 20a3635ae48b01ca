"""A simulation state kept in a dict of arrays, updated in place by helper functions, checkpointed."""
import numpy as np

state = {"u": np.zeros(16), "v": np.ones(16), "t": 0.0}
state["u"][5:8] = 1.0

def laplacian(a):
    out = np.zeros_like(a)
    out[1:-1] = a[:-2] - 2 * a[1:-1] + a[2:]
    return out

def advance(s, dt):
    s["v"] += dt * laplacian(s["u"])
    s["u"] += dt * s["v"]
    s["t"] += dt

checkpoints = []
for k in range(6):
    advance(state, 0.1)
    if k % 2 == 0:
        checkpoints.append({key: (val.copy() if isinstance(val, np.ndarray) else val) for key, val in state.items()})
energy = float((state["u"] ** 2).sum() + (state["v"] ** 2).sum())
