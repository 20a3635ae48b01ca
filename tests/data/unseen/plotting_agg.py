"""matplotlib calls inside the program with the Agg backend: plot, hist, imshow, close."""
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

t = np.linspace(0, 2 * np.pi, 50)
y = np.sin(t) * np.exp(-t / 4)
fig, ax = plt.subplots()
line, = ax.plot(t, y)
counts, edges, _ = ax.hist(y, bins=5)
im = ax.imshow(np.outer(y[:10], y[:10]))
xd = line.get_xdata()
plt.close(fig)
energy = (y ** 2).sum()
