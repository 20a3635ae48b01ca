"""np.pad modes and halo exchange by hand; borders set one element at a time."""
import numpy as np

a = np.arange(12.0).reshape(3, 4)
pc = np.pad(a, 1)
pe = np.pad(a, ((1, 0), (0, 2)), mode="edge")
pr = np.pad(a, 1, mode="reflect")
pw = np.pad(a, 1, mode="wrap")
pv = np.pad(a, 2, mode="constant", constant_values=-1)
u = np.zeros((6, 6))
u[1:-1, 1:-1] = np.arange(16.0).reshape(4, 4)
for it in range(3):
    u[0, :] = u[1, :]
    u[-1, :] = u[-2, :]
    u[:, 0] = u[:, 1]
    u[:, -1] = u[:, -2]
    u[0, 0] = 0.0
    u[-1, -1] = 0.0
    u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
