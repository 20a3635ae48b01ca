# %%
import numpy as np
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

def make_histogrammer(bins):
    edges_seen = []
    def hist_of(ax, data):
        counts, edges, _ = ax.hist(data, bins=bins)
        edges_seen.append(len(edges))
        return counts
    return hist_of

h5 = make_histogrammer(5)
# %% fuse
x = np.cos(np.linspace(0, 9, 60))
fig, ax = plt.subplots()
c = h5(ax, x * 3)
c2 = h5(ax, x[:30] + 1)
plt.close(fig)
# %%
print(c.shape, c.sum(), c2.sum())
