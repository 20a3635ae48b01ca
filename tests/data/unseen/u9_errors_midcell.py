# Errors a student meets and catches: in-place float into int (UFuncTypeError), a shape
# mismatch, an out-of-bounds index, an integer division by zero warning under errstate;
# work done before each error must stay done
import numpy as np

a = np.arange(6)
msgs = []
try:
    a += 1.5
except TypeError as exc:
    msgs.append(type(exc).__name__)
b = a * 2
try:
    c = b + np.ones(4)
except ValueError as exc:
    msgs.append("shape")
    c = b + np.ones(6)
try:
    c[10] = 1.0
except IndexError:
    msgs.append("index")
with np.errstate(divide="ignore"):
    q = b // np.array([0, 1, 2, 0, 4, 5])
    r = 1.0 / (b - b)
a2 = a.astype(float)
a2 += 1.5
flags = np.isinf(r).sum()
