"""np.linalg.solve / inv / det / eigh inside a Python loop over small matrices."""
import numpy as np

rng = np.random.default_rng(2)
dets, sols, evals = [], [], []
for k in range(5):
    B = rng.standard_normal((3, 3))
    A = B @ B.T + 3 * np.eye(3)
    rhs = np.arange(3.0) + k
    x = np.linalg.solve(A, rhs)
    Ainv = np.linalg.inv(A)
    dets.append(np.linalg.det(A))
    sols.append(x)
    w, V = np.linalg.eigh(A)
    evals.append(w)
    if np.linalg.det(A) > 50:
        continue
    sols[-1] = Ainv @ rhs
dets = np.array(dets)
evals = np.vstack(evals)
recon = V @ np.diag(w) @ V.T
cond = np.linalg.cond(A)
