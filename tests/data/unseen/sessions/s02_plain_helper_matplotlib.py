# %%
import numpy as np
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

def summary_plot(ax, data, bins=6):
    counts, edges, _ = ax.hist(data, bins=bins)
    ax.axvline(data.mean())
    return counts, edges
# %% fuse
t = np.linspace(0, 4 * np.pi, 200)
signal = np.sin(t) + 0.1 * np.cos(7 * t)
fig, ax = plt.subplots()
counts, edges = summary_plot(ax, signal * 2)
line, = ax.plot(t, signal)
ydata = line.get_ydata()
plt.close(fig)
# %%
print(counts.sum(), type(ydata).__name__, ydata[:3])
