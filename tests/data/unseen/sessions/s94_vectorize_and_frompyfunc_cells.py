# %%
import numpy as np
def grade(score):
    return "A" if score >= 90 else "B" if score >= 75 else "C"
vgrade = np.vectorize(grade)
# %% fuse
scores = np.array([95.0, 80.5, 60.0, 75.0]) + np.array([0, 1, 2, 3])
g = vgrade(scores)
pf = np.frompyfunc(lambda s: s / 10, 1, 1)
tens = pf(scores)
counts = {k: int((g == k).sum()) for k in "ABC"}
# %%
print(g, g.dtype, tens.dtype, tens, counts)
