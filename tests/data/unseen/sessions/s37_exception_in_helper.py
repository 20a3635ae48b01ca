# %%
import numpy as np

def safe_inverse(M):
    if abs(np.linalg.det(M)) < 1e-12:
        raise np.linalg.LinAlgError("singular matrix in safe_inverse")
    return np.linalg.inv(M)
results = []
# %% fuse
mats = [np.eye(2) * 2, np.array([[1.0, 2], [2, 4]]), np.eye(2)]
for M in mats:
    results.append(safe_inverse(M) @ np.ones(2))
done = True
# %%
print(len(results), results[0], M)
