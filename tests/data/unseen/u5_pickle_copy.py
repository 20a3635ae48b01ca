"""Pickle and copy round trips of arrays, views and a dict of arrays."""
import copy
import pickle
import numpy as np

a = np.linspace(0, 1, 6).reshape(2, 3) * 3
v = a[:, 1]
blob = pickle.dumps({"a": a, "v": v, "n": 3})
back = pickle.loads(blob)
back["a"][0, 0] = -5
same = back["v"].base is None
dc = copy.deepcopy({"x": a * 2, "lst": [a[0], a[1]]})
dc["lst"][0] += 1
sh = copy.copy(a)
sh *= 2
f_order = pickle.loads(pickle.dumps(np.asfortranarray(a)))
flags = (f_order.flags["F_CONTIGUOUS"], a.flags["C_CONTIGUOUS"])
