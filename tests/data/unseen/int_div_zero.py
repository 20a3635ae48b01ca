"""Integer division and modulo by zero (NumPy: 0 with a warning), INT_MIN // -1, float division by zero."""
import numpy as np

a = np.arange(-6, 6, dtype=np.int64)
b = np.array([0, 1, -1, 2, 0, -3] * 2, dtype=np.int64)
with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
    q = a // b
    r = a % b
    qm, rm = np.divmod(a, b)
    fm = np.fmod(a, b)
    i32 = a.astype(np.int32) // b.astype(np.int32)
    u = a.astype(np.uint8) // b.astype(np.uint8)
    big = np.array([np.iinfo(np.int64).min, 7]) // np.array([-1, 0])
    fz = a / b
    ff = a.astype(float) // b
    fr = a.astype(float) % b
    t = np.true_divide(a, 0)
