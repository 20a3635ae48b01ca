# stresses: matplotlib plotting inside a loop (an opaque call per iteration reading the
# arrays; the figure is closed).
# small: CURVES=3
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

CURVES = 30
t = np.linspace(0.0, 2.0 * np.pi, 400)
fig, ax = plt.subplots()
for k in range(CURVES):
    y = np.sin(t * (k + 1)) * np.exp(-0.1 * k * t)
    ax.plot(t, y)
peak = float(np.abs(y).max())
plt.close(fig)
