"""Logistic regression by gradient descent with a stopping test on the gradient norm."""
import numpy as np

rng = np.random.default_rng(0)
X = np.hstack([np.ones((60, 1)), rng.normal(size=(60, 2))])
true_w = np.array([0.5, -1.0, 2.0])
yv = (rng.random(60) < 1 / (1 + np.exp(-X @ true_w))).astype(float)
w = np.zeros(3)
lr = 0.5
history = []
for it in range(300):
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    grad = X.T @ (p - yv) / len(yv)
    w -= lr * grad
    if it % 50 == 0:
        history.append(float(-np.mean(yv * np.log(p) + (1 - yv) * np.log(1 - p))))
    if np.linalg.norm(grad) < 1e-4:
        break
acc = np.mean((p > 0.5) == yv)
