# Scaled dot-product attention in float32 over a batch of heads, with a causal mask,
# a numerically stable softmax (max with keepdims) and a residual connection
import numpy as np

rng = np.random.default_rng(7)
B, T, D = 4, 64, 32
q = rng.standard_normal((B, T, D), dtype=np.float32)
k = rng.standard_normal((B, T, D), dtype=np.float32)
v = rng.standard_normal((B, T, D), dtype=np.float32)
scale = np.float32(1.0 / np.sqrt(D))
scores = q @ k.transpose(0, 2, 1) * scale
mask = np.triu(np.ones((T, T), dtype=bool), k=1)
scores = np.where(mask, np.float32(-1e9), scores)
scores -= scores.max(axis=-1, keepdims=True)
weights = np.exp(scores)
weights /= weights.sum(axis=-1, keepdims=True)
out = weights @ v + q
norm = np.sqrt((out ** 2).mean(axis=-1, keepdims=True) + 1e-6)
out = out / norm
entropy = -(weights * np.log(weights + 1e-12)).sum(axis=-1)
