# Every way people import NumPy: star import, the full module name, from-imports of
# submodule functions, an unusual alias, and math's functions next to NumPy's
from numpy import *
import numpy
import numpy as xp
import numpy as np
from numpy.random import default_rng
from numpy.linalg import norm
from numpy import float32 as f32
import math

x = linspace(0, 2 * pi, 1000)
y = sin(x) ** 2 + cos(x) ** 2
z = numpy.exp(-x) * xp.sqrt(x + 1)
g = default_rng(1)
w = g.standard_normal(1000).astype(f32)
mix = w * f32(0.5) + f32(math.pi)
n = norm(z - y)
stacked = vstack([x, y, z])
means = mean(stacked, axis=1)
area = trapezoid(z, x)
ok = allclose(y, 1.0)
idx = where(z > 0.5)[0]
