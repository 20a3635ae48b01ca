"""From notebook session s15_structured_dtype: its cells as one script."""
import numpy as np
dt = np.dtype([("x", "f8"), ("y", "f8"), ("id", "i4")])
pts = np.zeros(6, dtype=dt)
pts["x"] = np.linspace(0, 1, 6)
pts["y"] = pts["x"] ** 2
pts["id"] = np.arange(6) * 10
pts["x"] += 1
r = np.sqrt(pts["x"] ** 2 + pts["y"] ** 2)
order = np.argsort(-r)
top = pts[order[:2]]
