"""Calibration: polyfit with weights, polyval, roots, np.polynomial.Polynomial.fit and interp with period."""
import numpy as np

x = np.linspace(0, 4, 15)
y = 0.5 * x ** 2 - x + 1 + 0.01 * np.sin(7 * x)
c = np.polyfit(x, y, 2, w=np.linspace(1, 2, 15))
yhat = np.polyval(c, x)
rts = np.roots(c)
P = np.polynomial.Polynomial.fit(x, y, 3)
pc = P.convert().coef
dP = P.deriv()(x)
ang = np.array([350.0, 10.0, 30.0])
val = np.array([1.0, 2.0, 3.0])
wrap = np.interp([0.0, 355.0, 20.0], ang, val, period=360)
lin = np.interp(x + 0.1, x, y, left=-1.0, right=-2.0)
