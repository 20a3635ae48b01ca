"""Rounding and float modulo: round half to even, rint, floor/ceil/trunc, % and // with negative floats, fmod, copysign."""
import numpy as np

x = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.675, -3.675, 0.125])
r0 = np.round(x)
r2 = np.round(x, 2)
r_1 = np.round(x * 100, -1)
ri = np.rint(x)
fl, ce, tr = np.floor(x), np.ceil(x), np.trunc(x)
m = x % 1.5
m2 = x % -1.5
fd = x // 0.5
fdn = x // -0.75
fm = np.fmod(x, 1.5)
cs = np.copysign(3.0, x)
hv = np.heaviside(x, 0.5)
sg = np.sign(np.array([0.0, -0.0, 2.0, -3.0]))
sgn_zero = 1 / np.sign(np.array([0.0, -0.0]) + 0.0)
