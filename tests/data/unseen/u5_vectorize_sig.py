"""np.vectorize with otypes, excluded, and a signature; np.frompyfunc returning objects."""
import numpy as np

def clamp_step(x, lo, hi):
    if x < lo:
        return lo
    if x > hi:
        return hi
    return round(x, 1)

vc = np.vectorize(clamp_step, otypes=[float], excluded={"hi"})
x = np.linspace(-2, 3, 11)
c = vc(x * 1.5, 0.0, hi=2.0)
norm_vec = np.vectorize(lambda v: np.sqrt((v ** 2).sum()), signature="(n)->()")
pts = np.arange(12.0).reshape(4, 3)
norms = norm_vec(pts)
op = np.frompyfunc(lambda a, b: a if a > b else b, 2, 1)
m = op(x, 0.5).astype(float)
acc = op.accumulate(np.array([3.0, 1.0, 4.0, 1.0, 5.0]), dtype=object)
