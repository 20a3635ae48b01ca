# %%
import numpy as np
import numba

@numba.njit(cache=False)
def pairwise_min(pts):
    best = np.inf
    for i in range(pts.shape[0]):
        for j in range(i + 1, pts.shape[0]):
            d = ((pts[i] - pts[j]) ** 2).sum()
            if d < best:
                best = d
    return best ** 0.5

def closest_gap(pts):
    return pairwise_min(pts)
# %% fuse
pts = np.stack([np.linspace(0, 1, 12), np.linspace(0, 1, 12) ** 2], axis=1)
gap = closest_gap(pts * 3)
norm = gap / np.ptp(pts)
# %%
print(round(gap, 10), round(norm, 10))
