"""datetime64/timedelta64 arithmetic: ranges, differences in days, business days, resampling."""
import numpy as np

start = np.datetime64("2024-01-28")
days = start + np.arange(10)
dow = (days.astype("datetime64[D]").view("int64") - 4) % 7
months = days.astype("datetime64[M]")
month_change = np.flatnonzero(np.diff(months.astype(int))) + 1
gaps = np.diff(np.array(["2024-01-01", "2024-01-05", "2024-02-01"], dtype="datetime64[D]"))
gap_days = gaps / np.timedelta64(1, "D")
hours = (np.datetime64("2024-03-01T12:00") - np.datetime64("2024-02-28T00:00")).astype("timedelta64[h]")
bd = np.busday_count("2024-01-01", "2024-02-01")
stamps = np.arange("2024-01-01T00", "2024-01-01T06", dtype="datetime64[h]")
vals = np.arange(6.0) ** 2
late = vals[stamps >= np.datetime64("2024-01-01T03")]
