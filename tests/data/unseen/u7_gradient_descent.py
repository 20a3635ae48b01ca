# Linear regression by batch gradient descent, arrays reused every epoch and nothing read
# back in the loop: one long batch, cut between epochs (docs/capture.md, "Long batches")
import numpy as np

rng = np.random.default_rng(7)
n = 2000
x = np.linspace(0.0, 2.0, n)
target = 3.0 + 2.0 * x + 0.1 * rng.standard_normal(n)
scale, rate = 2.0 / n, 0.05
fit = np.zeros(n)
residual = np.zeros(n)
coef = np.zeros(2)
grad = np.empty(2)
for epoch in range(220):
    residual[:] = target - fit
    grad[:] = scale * np.sum(residual), scale * np.dot(residual, x)
    coef += rate * grad
    fit = coef[0] + coef[1] * x
loss = float(np.mean((target - fit) ** 2))
