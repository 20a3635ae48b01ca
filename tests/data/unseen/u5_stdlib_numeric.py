"""Array values through the standard library: statistics, fractions, decimal, math.fsum, bytes, and float methods of NumPy scalars."""
import math
import statistics
from decimal import Decimal
from fractions import Fraction
import numpy as np

x = np.linspace(0.25, 4.0, 16)
y = np.sqrt(x) * 2
stats = (statistics.mean(x), statistics.median(y), statistics.pstdev(x[:5]), statistics.fmean(y))
corr = statistics.correlation(list(x), list(y))
total = x.sum()
exact = Fraction(total).limit_denominator(1000)
ratio = total.as_integer_ratio()
whole = total.is_integer()
dec = Decimal(float(x[3])).quantize(Decimal("0.001"))
fs = math.fsum(y) - y.sum()
codes = bytes((x * 10).astype(np.uint8))
parts = (total.real, total.imag, x[2].hex())
scaled = x / float(exact)
