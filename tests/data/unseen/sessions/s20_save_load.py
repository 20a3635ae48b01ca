# %%
import numpy as np
import tempfile, os
folder = os.path.join(tempfile.gettempdir(), "fusionlab_session_s20")
os.makedirs(folder, exist_ok=True)
path = os.path.join(folder, "run.npy")
zpath = os.path.join(folder, "run.npz")
# %% fuse
grid = np.arange(20.0).reshape(4, 5) ** 1.5
np.save(path, grid * 2)
np.savez(zpath, grid=grid, col=grid[:, 0])
back = np.load(path)
with np.load(zpath) as f:
    col = f["col"] + 1
diff = back - grid
# %%
print(np.load(path).sum() == back.sum(), col, diff.max())
