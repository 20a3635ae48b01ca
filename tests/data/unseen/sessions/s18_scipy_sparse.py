# %%
import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
n = 20
# %% fuse
main = 2.0 * np.ones(n)
off = -np.ones(n - 1)
L = sp.diags([off, main, off], [-1, 0, 1], format="csr")
b = np.sin(np.linspace(0, np.pi, n))
u = spla.spsolve(L, b)
res = L @ u - b
Ld = L.toarray() * 2
err = np.abs(res).max()
# %%
print(err < 1e-12, u[:3].round(8), Ld.trace())
