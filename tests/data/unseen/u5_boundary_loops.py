"""Boundary conditions set element by element and per edge in a 2-D relaxation, Fortran-order field."""
import numpy as np

n = 12
u = np.zeros((n, n), order="F")
for i in range(n):
    u[i, 0] = 1.0
    u[i, -1] = np.sin(np.pi * i / (n - 1))
u[0, :] = 0.5
u[-1, 1:-1] = np.linspace(0, 1, n - 2)
for it in range(25):
    u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    u[1:-1, -1] = u[1:-1, -2]
res = np.abs(u[1:-1, 1:-1] - 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])).max()
