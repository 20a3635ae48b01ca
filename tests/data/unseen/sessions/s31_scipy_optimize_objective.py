# %%
import numpy as np
from scipy import optimize

def loss(w, X, y):
    r = X @ w - y
    return 0.5 * (r ** 2).sum()

def grad(w, X, y):
    return X.T @ (X @ w - y)
# %% fuse
X = np.column_stack([np.ones(10), np.linspace(0, 1, 10)])
y = 1.5 + 2.0 * X[:, 1]
w0 = np.zeros(2)
res = optimize.minimize(loss, w0, args=(X, y), jac=grad, method="BFGS")
w = res.x
fit = X @ w
# %%
print(np.round(w, 6), res.success, np.abs(fit - y).max() < 1e-5)
