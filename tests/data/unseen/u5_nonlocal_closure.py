"""A closure accumulating with nonlocal, a generator of arrays and the walrus operator in loops."""
import numpy as np

def make_accumulator(n):
    total = np.zeros(n)
    count = 0
    def add(v):
        nonlocal total, count
        total = total + v
        count += 1
        return total / count
    return add

acc = make_accumulator(3)
means = [acc(np.array([k, k * 2.0, k ** 2])) for k in range(5)]

def halves(x):
    while (m := x.max()) > 1:
        yield m
        x = x / 2

peaks = list(halves(np.array([3.0, 17.0, 5.0])))
data = np.linspace(0, 10, 11)
i = 0
found = []
while (chunk := data[i:i + 3]).size:
    if (s := chunk.sum()) > 10:
        found.append(s)
    i += 3
