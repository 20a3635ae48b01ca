# Builtins and the standard library over arrays: sorted, max, sum, zip, dict, reduce,
# itertools, f-strings, printoptions, tobytes/frombuffer, identity and memory sharing
import copy
import functools
import itertools
import numpy as np

rng = np.random.default_rng(2)
a = rng.random(12)
b = np.linspace(-1, 1, 12)
largest = max(a)
total = sum(b)
ordered = sorted(a)[:3]
pairs = list(zip(a[:4], b[:4]))
named = dict(zip("abcd", a[:4]))
layers = [np.sin(a * k) for k in range(1, 5)]
envelope = functools.reduce(np.maximum, layers)
running = list(itertools.accumulate(layers, np.add))
text = f"{a[0]:.3f} {b.mean():+.2e} {int(a.argmax())}"
with np.printoptions(precision=2, suppress=True):
    shown = np.array2string(a[:5])
raw = np.frombuffer(a.tobytes(), dtype=np.float64).reshape(3, 4)
view = raw[1:, ::2]
shares = bool(np.shares_memory(view, raw))
is_base = view.base is raw or view.base is raw.base
deep = copy.deepcopy({"a": a, "layers": layers})
deep["a"][0] = -1.0
grid = np.fromfunction(lambda i, j: (i + 1) * (j + 2), (4, 5))
cube = grid[..., None] * b[None, None, :3]
idx = [(i, j) for i, j in np.ndindex(3, 3) if (i + j) % 2 == 0]
acc = np.zeros((3, 3))
for (i, j), v in np.ndenumerate(acc):
    acc[i, j] = v + i * 3 + j
acc.flat[::4] = -acc.flat[::4]
frozen = a.copy()
frozen.flags.writeable = False
try:
    frozen[0] = 0.0
    refused = False
except ValueError:
    refused = True
