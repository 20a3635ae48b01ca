# Polynomials the textbook way: Horner's rule in a loop over coefficients for float64, float32
# and complex inputs, compared with np.polyval; Chebyshev recurrences; a Newton root polish loop
import numpy as np

coef = [2.0, -3.0, 0.5, 4.0, -1.25, 0.75]
x64 = np.linspace(-1.5, 1.5, 1001)
x32 = x64.astype(np.float32)
z = x64[::10] + 0.5j * x64[::10][::-1]


def horner(c, x):
    acc = np.zeros_like(x)
    for ck in c:
        acc = acc * x + ck
    return acc


p64, p32, pz = horner(coef, x64), horner(coef, x32), horner(coef, z)
ref = np.polyval(coef, x64)
d64 = float(np.abs(p64 - ref).max())
T = [np.ones_like(x64), x64.copy()]
for k in range(2, 12):
    T.append(2 * x64 * T[-1] - T[-2])
cheb_ok = float(np.abs(T[11] - np.cos(11 * np.arccos(np.clip(x64, -1, 1))))[np.abs(x64) <= 1].max())
dc = np.polyder(coef)
r = np.array([-1.0, 0.3, 1.2])
for _ in range(30):
    r = r - np.polyval(coef, r) / np.polyval(dc, r)
resid = np.polyval(coef, r)
