"""Integer overflow wrapping, floor division and modulo by zero under np.errstate, float_power of ints."""
import numpy as np

a = np.array([2**62, -2**62, 7, -7], dtype=np.int64)
with np.errstate(over="ignore"):
    wrapped = a * 4
b = np.array([3, 0, -2, 0], dtype=np.int32)
with np.errstate(divide="ignore"):
    fd = np.array([7, 7, 7, -7], dtype=np.int32) // b
    md = np.array([7, 7, 7, -7], dtype=np.int32) % b
i8 = np.array([100, 120, -128], dtype=np.int8)
s8 = i8 + i8
u = np.array([1, 2, 3], dtype=np.uint8) - np.uint8(5)
with np.errstate(divide="ignore", invalid="ignore"):
    fz = np.array([1.0, -1.0, 0.0]) / 0.0
caught = []
with np.errstate(divide="raise"):
    try:
        np.array([1.0]) / 0.0
    except FloatingPointError as e:
        caught.append(str(e))
