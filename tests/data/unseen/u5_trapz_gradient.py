"""Numerical calculus: gradient with edge_order=2 and uneven spacing, diff with prepend, trapezoid."""
import numpy as np

x = np.geomspace(0.1, 10, 30)
f = np.log(x) * x
df = np.gradient(f, x, edge_order=2)
exact = np.log(x) + 1
err = np.abs(df - exact).max()
d1 = np.diff(f, prepend=f[0])
d2 = np.diff(f, n=2, append=[0.0, 0.0])
area = np.trapezoid(f, x)
cum = np.concatenate([[0.0], np.cumsum(0.5 * (f[1:] + f[:-1]) * np.diff(x))])
Z = np.outer(np.sin(x), np.cos(x))
gz0, gz1 = np.gradient(Z, 0.5, 2.0)
vol = np.trapezoid(np.trapezoid(Z, dx=0.5, axis=1), dx=2.0)
