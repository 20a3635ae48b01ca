"""np.select, np.piecewise and np.choose on a tax-bracket and a hat function."""
import numpy as np

income = np.array([5e3, 2e4, 4.5e4, 9e4, 2.5e5, 0.0])
conds = [income <= 1e4, income <= 5e4, income <= 1e5]
rates = [0.0, 0.2, 0.3]
rate = np.select(conds, rates, default=0.45)
tax = income * rate
x = np.linspace(-2, 2, 9)
hat = np.piecewise(x, [x < -1, (x >= -1) & (x < 0), (x >= 0) & (x < 1), x >= 1],
                   [0.0, lambda t: t + 1, lambda t: 1 - t, 0.0])
which = np.array([0, 2, 1, 1, 0, 2])
choices = [np.arange(6.0), np.arange(6.0) * 10, -np.arange(6.0)]
picked = np.choose(which, choices)
clipped = np.choose(np.array([0, 3, 5]), [1, 2, 3], mode="clip")
