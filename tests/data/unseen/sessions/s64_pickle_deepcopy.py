# %%
import numpy as np
import pickle, copy, io
from dataclasses import dataclass

@dataclass
class Snapshot:
    t: float
    field: np.ndarray
# %% fuse
f = np.linspace(0, 1, 5) ** 2
snap = Snapshot(float(f.sum()), f * 2)
clone = copy.deepcopy(snap)
clone.field += 1
blob = pickle.dumps(snap)
buf = io.BytesIO()
np.save(buf, f)
raw = buf.getvalue()
# %%
back = pickle.loads(blob)
print(back.field, clone.field, np.load(io.BytesIO(raw)))
