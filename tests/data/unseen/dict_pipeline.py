"""A dictionary of arrays as a pipeline state, updated key by key in a loop."""
import numpy as np

state = {"u": np.linspace(0, 1, 16), "v": np.zeros(16), "t": 0.0}
log = {"max": [], "mean": []}
for step in range(4):
    state["v"] = state["v"] + 0.1 * (np.roll(state["u"], 1) - state["u"])
    state["u"] += 0.1 * state["v"]
    state["t"] += 0.1
    log["max"].append(state["u"].max())
    log["mean"].append(float(state["u"].mean()))
summary = {k: np.array(v) for k, v in log.items()}
keys = sorted(state)
flat = np.concatenate([state["u"], state["v"]])
