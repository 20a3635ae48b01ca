import numpy as np
Z = np.zeros((512, 512), [('U', float), ('V', float)])
U, V = Z['U'], Z['V']
V += 0.25
for _ in range(20):
    U += 0.5 * V + 1.0
