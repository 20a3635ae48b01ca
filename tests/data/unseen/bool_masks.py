"""Boolean logic: masks combined with &, |, ^, ~, logical_*, sums and means of masks."""
import numpy as np

x = np.linspace(-2, 2, 21)
a = x > 0
b = np.abs(x) < 1
both = a & b
either = a | b
xor = a ^ b
neither = ~(a | b)
lx = np.logical_xor(a, b)
land = np.logical_and.reduce([a, b, x != 0])
frac = either.mean()
count = both.sum()
bsum = a + b
bmul = a * b
bint = a.astype(int) - b
bf = a * 1.5
cum = np.cumsum(a)
anyrow = np.logical_or.accumulate(x > 1.5)
