# %%
import numpy as np
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

def plot_all(*series, **style):
    fig, ax = plt.subplots()
    lines = [ax.plot(s, **style)[0] for s in series]
    data = [ln.get_ydata() for ln in lines]
    plt.close(fig)
    return data
# %% fuse
a = np.linspace(0, 1, 8) ** 2
got = plot_all(a, a * 2, np.sqrt(a), color="k")
kinds = [type(g).__name__ for g in got]
# %%
print(kinds, got[1][-1], len(got))
