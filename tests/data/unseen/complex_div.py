"""Complex division (of large values too; NumPy multiplies complex numbers with FMA, so overflowing products differ by design, see round 1), abs of large complex, sqrt of negative as complex, power with complex exponent."""
import numpy as np

z = np.array([1 + 2j, -3 + 0.5j, 1e150 + 1e150j, 0j, 2 - 1e-300j])
w = np.array([0.5 - 1j, 2j, 1e150 - 1e150j, 1 + 1j, 1e-300 + 0j])
with np.errstate(all="ignore"):
    d = z / w
    a = np.abs(z)
    s = np.sqrt(np.array([-4.0, 4.0]) + 0j)
    p = z[:2] ** (0.5 + 0.5j)
    e = np.exp(z[:2])
    l = np.log(z[:2])
    r = 1 / z[:2]
    c = np.conj(z) * z
