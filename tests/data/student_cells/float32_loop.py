# stresses: float32 arrays with Python-scalar arithmetic in a loop (NEP 50 promotion kept
# float32).
# small: N=500 STEPS=50
import numpy as np

N = 100_000
STEPS = 1_000
u = np.linspace(0.0, 1.0, N, dtype=np.float32)
for _ in range(STEPS):
    u = u * 0.999 + 0.0005
checksum = float(u.sum())
