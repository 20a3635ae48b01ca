"""A daily series: datetime64 ranges, timedelta64 arithmetic, weekday masks and datetime_as_string."""
import numpy as np

days = np.arange("2024-02-25", "2024-03-10", dtype="datetime64[D]")
dow = (days.astype("datetime64[D]").view("int64") - 4) % 7
weekend = dow >= 5
temps = 10 + 3 * np.sin(np.arange(len(days)) / 2.0)
temps[weekend] -= 1.5
gaps = np.diff(days)
hours = (days[-1] - days[0]) / np.timedelta64(1, "h")
stamp = np.datetime64("2024-02-28T22:30") + np.arange(4) * np.timedelta64(45, "m")
text = np.datetime_as_string(stamp, unit="m")
month = days.astype("datetime64[M]")
march = temps[month == np.datetime64("2024-03")].mean()
leap = np.datetime64("2024-03-01") - np.datetime64("2024-02-01")
