# %%
import numpy as np
pts = np.rec.fromarrays([np.linspace(0, 1, 5), np.zeros(5)], names="x,y")
# %% fuse
pts.y = np.sin(pts.x * np.pi)
pts.x += 0.5
r = np.hypot(pts.x, pts.y)
far = pts[r > 1.0]
# %%
print(type(pts).__name__, pts.y.round(6), r.round(6), len(far), type(far).__name__)
