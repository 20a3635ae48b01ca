# %%
import numpy as np, tempfile, os
fn = os.path.join(tempfile.gettempdir(), f"fusionlab_s83_{os.getpid()}.dat")
mm = np.memmap(fn, dtype="f8", mode="w+", shape=(3, 4))
mm[:] = 1.0
# %% fuse
mm[1] = np.arange(4.0) * 2
mm *= 3
total = mm.sum()
view = mm[:, 1:3]
# %%
mm.flush()
print(type(mm).__name__, total, np.fromfile(fn, dtype="f8")[:8], type(view).__name__)
del mm, view
os.remove(fn)
