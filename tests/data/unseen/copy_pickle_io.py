"""copy.deepcopy, pickle round trips and np.save/np.load through a temporary directory."""
import copy
import os
import pickle
import tempfile
import numpy as np

x = np.linspace(0, 1, 9)
y = x ** 2 + 1
state = {"y": y, "parts": [y[:3], y[3:]], "meta": ("run", 3)}
dup = copy.deepcopy(state)
dup["y"][0] = -5.0
shallow = copy.copy(y)
blob = pickle.dumps(state)
back = pickle.loads(blob)
with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "arr.npy")
    np.save(path, y * 3)
    loaded = np.load(path)
    np.savez(os.path.join(d, "both.npz"), a=x, b=y)
    with np.load(os.path.join(d, "both.npz")) as z:
        ab = z["a"] + z["b"]
diff = loaded - y
del d, path   # a temporary directory's name differs from run to run
