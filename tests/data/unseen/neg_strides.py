"""Negative strides: reversed views read and written, flips, reversed slices assigned."""
import numpy as np

x = np.arange(12.0)
r = x[::-1]
r[:3] = -1
y = x[::-2] * 2
z = np.zeros(12)
z[::-1] = np.arange(12)
m = np.arange(16.0).reshape(4, 4)
m[::-1, ::-1] += 100
fl = np.flip(m, axis=0) - m
fu = np.flipud(m)[0]
rot = np.rot90(m)
w = np.arange(10.0)
w[1:] = w[:-1][::-1]
v = np.arange(8.0)
v[::-1] = v
