"""Python protocols on arrays and their scalars: hash, in, bool, len, index, divmod, format, sorted, sum, min/max builtins."""
import math
import operator
import numpy as np

x = np.linspace(0.5, 3.5, 7)
k = np.arange(6)
out = {}
try:
    hash(x)
    out["hash"] = "hashable"
except TypeError:
    out["hash"] = "unhashable"
out["h_scalar"] = hash(x[1]) == hash(float(x[1]))
out["in"] = (1.0 in x, 1.5 in x, [1.5, 2.0] in x.reshape(-1, 1))
try:
    bool(x > 1)
except ValueError as e:
    out["bool"] = str(e)[:20]
out["bool1"] = bool(x[:1] > 0)
out["len"] = len(x[::2])
try:
    len(x.sum())
except TypeError:
    out["len0"] = "no len"
names = ["a", "b", "c", "d", "e", "f"]
picked = [names[i] for i in k[::2]]
sl = x[k[1]:k[4]]
rng = list(range(k[2], k.sum()))
out["idx"] = operator.index(k[3])
dm = divmod(x[3], 1.25)
fm = (format(x.sum(), ".3f"), f"{x[2]:8.2e}", f"{x.mean()!r}", "%.2f" % x[1])
srt = sorted(x[::-1])
bsum = sum(x)
bmax, bmin = max(x), min(k)
clo = math.isclose(x.sum(), 14.0)
rnd = (round(x[1]), round(x[1], 1), math.floor(x[2]), math.ceil(x[2]), abs(-x[3]))
cpx = complex(x[0]) + 1j
same = x[2] == x.tolist()[2]
