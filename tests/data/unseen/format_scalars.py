"""f-strings with format specs of traced scalars, round(), math.sqrt(), str() and % formatting."""
import math
import numpy as np

x = np.linspace(0, 10, 21)
m = x.mean()
line = f"mean={x.mean():.3f} std={x.std():8.4f} max={x.max():e} n={x.size:d} {x[3]!r}"
pct = "%.2f%% of %d" % (x[4] * 10, x.argmax())
r = round(x.std(), 2)
r0 = round(x[5])
root = math.sqrt(x.sum())
fl = math.floor(x[7] * 3.3)
s = str(x[:3])
rep = repr(x.sum())
parts = "{:>6.2f}|{:<5}".format(x[2], int(x[9]))
comma = f"{x.sum() * 1000:,.1f}"
cplx = f"{np.exp(1j * x[3]):.3f}"
