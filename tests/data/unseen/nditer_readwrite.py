"""From notebook session s47_nditer_ndenumerate: its cells as one script."""
import numpy as np
M = np.arange(6.0).reshape(2, 3) ** 2
cells = {idx: v for idx, v in np.ndenumerate(M)}
total = 0.0
for v in np.nditer(M):
    total += float(v)
with np.nditer(M, op_flags=["readwrite"]) as it:
    for v in it:
        v[...] = v * 0.5
flat_max = max(M.flat)
