# %%
import numpy as np
np.set_printoptions(precision=4)
# %% fuse
A = np.arange(9.0).reshape(3, 3) / 7
print(A)
print("trace", np.trace(A), A.sum(axis=0))
display(A.T)
display(A.max(), A.dtype)
B = A @ A
B
