# A report printed the way notebooks do: f-strings with format specs on NumPy scalars,
# np.printoptions as a context, array2string, np.format_float_positional, tolist round trips
import numpy as np

x = np.linspace(0, 1, 7) ** 2
y = np.sqrt(x) * 3 - 1
lines = []
lines.append(f"mean={x.mean():.4f} max={y.max():8.3f} argmax={y.argmax():d}")
with np.printoptions(precision=3, suppress=True):
    lines.append(str(y))
    lines.append(repr(x[:3]))
lines.append(np.array2string(y, separator=", ", precision=2))
lines.append(np.format_float_positional(np.float32(y[3]), precision=5))
lines.append("{:.2e}".format(x.sum()))
lines.append("%6.2f|%d" % (y[2], x.size))
vals = y.tolist()
back = np.array(vals) - y
report = "\n".join(lines)
print(report)
