"""Structured arrays: fields as columns, computed columns, sorting by a field, datetime64 arithmetic."""
import numpy as np

dt = np.dtype([("name", "U8"), ("age", "i4"), ("score", "f8")])
people = np.array([("ann", 31, 88.5), ("bob", 25, 92.0), ("cy", 40, 79.5)], dtype=dt)
ages = people["age"] * 2
scores = people["score"] - people["score"].mean()
order = np.sort(people, order="score")["name"]
people["score"] += 1.0
best = people[np.argmax(people["score"])]["name"]
days = np.arange("2024-01-01", "2024-01-08", dtype="datetime64[D]")
delta = (days - days[0]).astype(int)
week = days + np.timedelta64(7, "D")
weekday = (days.astype("datetime64[D]").view("int64") - 4) % 7
