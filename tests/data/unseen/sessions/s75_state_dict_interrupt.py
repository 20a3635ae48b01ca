# %%
import numpy as np
state = {"u": np.zeros(6), "t": 0, "log": []}

def advance(st, dt):
    st["u"] = st["u"] + dt * (1 - st["u"])
    st["t"] += 1
    st["log"].append(st["u"][0])
    if st["t"] == 3:
        raise KeyboardInterrupt("stopped by the user")
# %% fuse
for _ in range(5):
    advance(state, 0.5)
# %% fuse
for _ in range(2):
    advance(state, 0.5)
done = state["u"].sum()
# %%
print(state["t"], state["u"], state["log"], done)
