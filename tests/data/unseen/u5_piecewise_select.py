"""Piecewise tax brackets with np.piecewise, np.select with a default, and 1-argument np.where."""
import numpy as np

income = np.array([5e3, 12e3, 40e3, 85e3, 160e3, 0.0])
tax = np.piecewise(income, [income < 10e3, (income >= 10e3) & (income < 50e3), income >= 50e3],
                   [0.0, lambda v: (v - 10e3) * 0.2, lambda v: 8e3 + (v - 50e3) * 0.4])
band = np.select([income < 10e3, income < 50e3, income < 100e3], ["low", "mid", "high"], default="top")
rate = np.select([income > 0], [tax / np.where(income > 0, income, 1.0)], default=np.nan)
(rich,) = np.where(income > 50e3)
rows, cols = np.where(np.eye(3) == 0)
nz = np.argwhere(tax > 0)
net = income - tax
