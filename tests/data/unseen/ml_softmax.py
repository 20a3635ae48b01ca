"""ML notebook: one-hot labels, softmax with keepdims, log-sum-exp, cross-entropy, accuracy."""
import numpy as np

rng = np.random.default_rng(0)
n, d, k = 32, 5, 4
X = rng.normal(size=(n, d))
W = rng.normal(size=(d, k)) * 0.1
b = np.zeros(k)
labels = rng.integers(0, k, size=n)
onehot = np.eye(k)[labels]
for epoch in range(5):
    logits = X @ W + b
    m = logits.max(axis=1, keepdims=True)
    lse = m + np.log(np.exp(logits - m).sum(axis=1, keepdims=True))
    probs = np.exp(logits - lse)
    loss = -(onehot * (logits - lse)).sum() / n
    grad = probs - onehot
    W -= 0.5 * X.T @ grad / n
    b -= 0.5 * grad.mean(axis=0)
pred = probs.argmax(axis=1)
acc = (pred == labels).mean()
rowsum = probs.sum(axis=1)
