# %%
import numpy as np
mats = [np.array([[2.0, 1], [1, 3]]), np.array([[1.0, 2], [2, 4]]), np.eye(2) * 3]
# %% fuse
solutions, failures = [], []
rhs = np.array([1.0, 2.0])
for i, A in enumerate(mats):
    try:
        solutions.append(np.linalg.solve(A, rhs))
    except np.linalg.LinAlgError as err:
        failures.append((i, str(err)))
resid = [np.abs(mats[0] @ solutions[0] - rhs).max()]
# %%
print(len(solutions), failures, resid)
