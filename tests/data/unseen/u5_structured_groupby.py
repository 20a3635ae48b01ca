"""Structured array of sales: group totals with np.unique(return_inverse) and np.add.at on a field."""
import numpy as np

dt = np.dtype([("store", "U3"), ("qty", "i4"), ("price", "f8")])
sales = np.array([("abc", 2, 1.5), ("xyz", 1, 9.0), ("abc", 5, 1.25), ("def", 3, 4.0), ("xyz", 2, 8.5)], dtype=dt)
revenue = sales["qty"] * sales["price"]
stores, inv, cnt = np.unique(sales["store"], return_inverse=True, return_counts=True)
tot = np.zeros(len(stores))
np.add.at(tot, inv, revenue)
avg = tot / cnt
sales["price"] *= 1.1
sales[sales["qty"] > 2]["qty"]
top = sales[np.argmax(sales["qty"] * sales["price"])]
field_view = sales["qty"]
field_view += 1
summary = {s: float(t) for s, t in zip(stores, tot)}
