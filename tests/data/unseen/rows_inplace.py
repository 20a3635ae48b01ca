"""Iterating over a 2-D array's rows and modifying them in place; enumerate/zip over arrays."""
import numpy as np

A = np.arange(12.0).reshape(4, 3)
for row in A:
    row *= 2
for i, row in enumerate(A):
    row += i
B = np.zeros((4, 3))
for dst, src in zip(B, A):
    dst[:] = src[::-1]
C = np.ones((3, 4))
for col in C.T:
    col /= col.size
norms = [float(np.linalg.norm(r)) for r in A]
for r, s in zip(A, B):
    r -= s
E = np.eye(3)
for k, (a, b) in enumerate(zip(E, E[::-1])):
    a[k] = b.sum() + k
