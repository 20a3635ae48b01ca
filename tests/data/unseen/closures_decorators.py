"""Closures, decorators (functools.wraps, lru_cache on ints), lambdas with map() and filter()."""
import functools
import numpy as np

def counted(fn):
    @functools.wraps(fn)
    def wrapper(*a, **kw):
        wrapper.calls += 1
        return fn(*a, **kw)
    wrapper.calls = 0
    return wrapper

def make_scaler(factor):
    def scale(v):
        return v * factor
    return scale

@counted
def normalise(v):
    return (v - v.mean()) / v.std()

@functools.lru_cache(maxsize=None)
def weights(n):
    return tuple(np.hanning(n).tolist())

x = np.linspace(0, 3, 10) ** 2
double = make_scaler(2.0)
z = normalise(double(x))
z2 = normalise(x)
calls = normalise.calls
parts = list(map(lambda a: a.sum(), np.split(x, 5)))
big = list(filter(lambda a: a.max() > 2, np.split(x, 5)))
w = np.array(weights(5)) * x[:5]
composed = functools.reduce(lambda a, b: a * 0.5 + b, [x, x[::-1], np.ones(10)])
name = normalise.__name__
