"""Bootstrap with the legacy RandomState: choice with p=, randint, shuffle of rows, permutation of an array."""
import numpy as np

rs = np.random.RandomState(2024)
data = rs.normal(5, 2, size=40)
boots = np.empty(200)
for b in range(200):
    sample = data[rs.randint(0, data.size, data.size)]
    boots[b] = sample.mean()
ci = np.percentile(boots, [2.5, 97.5])
p = np.array([0.1, 0.2, 0.7])
picks = rs.choice(3, size=10, p=p)
M = np.arange(15.0).reshape(5, 3)
rs.shuffle(M)
perm = rs.permutation(M[:, 0])
state = rs.get_state()[2]
u = rs.random_sample(3) + rs.rand(3) + rs.standard_normal(3)
