# Resampling statistics: rng.shuffle and rng.permuted on arrays computed just before (in place),
# rng.choice with probabilities, bootstrap indices, a permutation test, and percentiles
import numpy as np

rng = np.random.default_rng(17)
a = rng.normal(1.0, 2.0, 300)
b = rng.normal(1.4, 2.0, 280)
obs = b.mean() - a.mean()
pooled = np.concatenate([a, b]) * 1.0 + 0.0
count = 0
for _ in range(40):
    rng.shuffle(pooled)
    diff = pooled[300:].mean() - pooled[:300].mean()
    count += abs(diff) >= abs(obs)
p_perm = count / 40
boot = np.empty(50)
for i in range(50):
    idx = rng.integers(0, a.size, a.size)
    boot[i] = np.median(a[idx])
ci = np.percentile(boot, [2.5, 97.5])
m = np.arange(24.0).reshape(4, 6) ** 0.5
mp = rng.permuted(m, axis=1)
rng.permuted(m, axis=0, out=m)
w = np.array([0.1, 0.2, 0.3, 0.4])
draws = rng.choice(np.array([10.0, 20.0, 30.0, 40.0]) * 2, size=1000, p=w)
freq = np.unique(draws, return_counts=True)
perm = rng.permutation(a)[:5] - 1
