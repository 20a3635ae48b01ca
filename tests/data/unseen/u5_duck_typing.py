"""Duck typing in helper code: iterable checks with try/iter, hasattr(shape), len() guards, numbers.Number."""
import numbers
import numpy as np

def iterable(v):
    try:
        iter(v)
        return True
    except TypeError:
        return False

def as_list(v):
    return [float(x) for x in v] if iterable(v) else [float(v)]

def describe(v):
    if isinstance(v, numbers.Number):
        return "number"
    if hasattr(v, "shape") and len(getattr(v, "shape")) == 0:
        return "0-d"
    return f"array{v.shape}"

x = np.linspace(0, 3, 7)
flags = [iterable(v) for v in (x, x.sum(), x[1], x[:2], np.asarray(x.max()))]
flat = as_list(x.mean()) + as_list(x[:3] * 2)
kinds = [describe(v) for v in (x, x.sum(), np.asarray(x.max()), x.reshape(7, 1) * 1)]
total = sum(as_list(x ** 2))
