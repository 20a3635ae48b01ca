"""Less common element-wise functions: arctan2, hypot, logaddexp, frexp/ldexp, modf, sinc, signbit, copysign, nextafter, spacing."""
import numpy as np

x = np.linspace(-3, 3, 13)
y = np.linspace(2, -2, 13)
ang = np.arctan2(y, x)
rad = np.hypot(x, y)
lse = np.logaddexp(x, y) - np.logaddexp2(x, y)
m, e = np.frexp(rad + 1)
rebuilt = np.ldexp(m, e) - (rad + 1)
frac, whole = np.modf(x * 1.3)
s = np.sinc(x) + np.float_power(np.abs(x) + 1, 0.5)
neg = np.signbit(x - 0.5)
cs = np.copysign(rad, -y)
nxt = np.nextafter(x, np.inf) - x
sp = np.spacing(rad)
rounded = np.around(x * 1.2345, 2)
close = np.isclose(np.sin(ang) * rad, y)
