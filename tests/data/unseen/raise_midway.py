"""A cell whose helper raises inside a loop; the caller catches a custom exception and keeps partial results."""
import numpy as np

class Diverged(Exception):
    pass

def iterate(x, limit):
    for k in range(20):
        x = x * 1.7 - 0.1
        if np.abs(x).max() > limit:
            raise Diverged(f"step {k}")
    return x

x0 = np.linspace(0.5, 1.0, 8)
try:
    xs = iterate(x0, 50.0)
except Diverged as exc:
    reason = str(exc)
    xs = None
part = x0 * 2
try:
    np.linalg.inv(np.zeros((2, 2)))
except np.linalg.LinAlgError as e:
    err = type(e).__name__
finally:
    done = part.sum()
