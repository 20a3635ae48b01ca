# stresses: a `while err > tol:` convergence loop: reading err each iteration flushes a
# batch, so the cell records thousands of small batches.
# small: N=20 TOL=1e-3
import numpy as np

N = 50
TOL = 1e-6
u = np.zeros(N)
u[0], u[-1] = 1.0, 2.0
err = 1.0
iterations = 0
while err > TOL:
    new = u.copy()
    new[1:-1] = 0.5 * (u[:-2] + u[2:])
    err = np.abs(new - u).max()
    u = new
    iterations += 1
