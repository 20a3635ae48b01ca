import numpy as np
rng = np.random.default_rng(0)
x = rng.standard_normal((1000, 500))
x = (x - x.mean(axis=0)) / x.std(axis=0)
x = np.clip(x, -3, 3)
e = np.exp(x - x.max(axis=1, keepdims=True))
p = e / e.sum(axis=1, keepdims=True)
