"""Moving averages with convolve in full/same/valid modes, correlate to find a lag."""
import numpy as np

x = np.cos(np.linspace(0, 6, 40)) + np.linspace(0, 2, 40)
k = np.ones(5) / 5
full = np.convolve(x, k)
same = np.convolve(x, k, mode="same")
valid = np.convolve(x, k, mode="valid")
edge = same[:2] - valid[0]
a = np.zeros(30)
a[8:12] = 1.0
b = np.roll(a, 5)
cc = np.correlate(b, a, mode="full")
lag = int(cc.argmax()) - (len(a) - 1)
detr = x - np.convolve(x, np.ones(9) / 9, mode="same")
