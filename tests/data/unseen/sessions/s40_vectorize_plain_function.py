# %%
import numpy as np

def grade(score):
    if score >= 90:
        return "A"
    if score >= 75:
        return "B"
    return "C"

def clipped(x, lo=0.0, hi=100.0):
    return min(max(x, lo), hi)
# %% fuse
scores = np.array([95.0, 80.5, 60.0, 101.0, 74.9])
letters = np.vectorize(grade)(scores)
fixed = np.vectorize(clipped)(scores * 1.05)
n_a = int((letters == "A").sum())
# %%
print(letters, fixed.round(4), n_a)
