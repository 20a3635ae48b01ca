"""Segment sums with reduceat, running products with accumulate, and outer tables."""
import numpy as np

vals = np.arange(1.0, 13.0)
starts = np.array([0, 3, 4, 9])
seg_sum = np.add.reduceat(vals, starts)
seg_max = np.maximum.reduceat(vals * np.cos(vals), starts)
run_prod = np.multiply.accumulate(vals[:6] / 3)
run_min = np.minimum.accumulate(np.sin(vals))
table = np.add.outer(np.arange(3.0), np.arange(4.0) * 10)
pw = np.power.outer(np.arange(1, 4), np.arange(3))
sub = np.subtract.outer(vals[:3], vals[:3])
cum2d = np.add.accumulate(table, axis=1)
red = np.logical_or.reduce(table > 25, axis=0)
