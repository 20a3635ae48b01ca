"""float16 arithmetic and reductions; mixing float16 with float32 and Python floats."""
import numpy as np

h = np.linspace(0, 1, 16, dtype=np.float16)
h2 = h * 3 + 1
hs = h.sum()
hm = h.mean()
hmix = h + np.float32(0.1)
hpy = h * 0.1
hexp = np.exp(h)
hsq = np.sqrt(h2)
hmax = np.max(h2)
hcast = h2.astype(np.float32).sum()
hcmp = (h > 0.5).sum()
hsub = h[1:] - h[:-1]
