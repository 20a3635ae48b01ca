"""np.nditer over arrays (readwrite), .item()/.tolist()/float()/int(argmax()) as loop bounds."""
import numpy as np

x = np.linspace(0, 1, 6).reshape(2, 3)
with np.nditer(x, op_flags=["readwrite"]) as it:
    for v in it:
        v[...] = v * 2 + 1
s = 0.0
for v in np.nditer(x):
    s += float(v)
y = np.arange(7.0) ** 2
n = int(y.argmax())
acc = np.zeros(n)
for i in range(n):
    acc[i] = y[i] + y.item(i + 1)
lst = y.tolist()
bound = len(y) + y.size + y.shape[0]
first = y[1].item()
total = sum(lst[: int(y[2])])
half = y[: int(float(y.mean()))]
it_pairs = [(a, b) for a, b in np.nditer([np.arange(3), np.arange(3.0) * 2])]
pairs = [(int(a), float(b)) for a, b in it_pairs]
