# %%
import numpy as np
state = np.ones(4)
steps = 0

def advance(rate):
    global state, steps
    state = state * (1 + rate)
    steps += 1
    return state.sum()
# %% fuse
totals = [advance(r) for r in (0.1, 0.2, 0.3)]
final = state.copy()
# %%
print(steps, state, totals[-1].round(10), final is state)
