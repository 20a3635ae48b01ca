"""Results in dicts, lists, tuples, dataclasses and namedtuples."""
import numpy as np
from collections import namedtuple
from dataclasses import dataclass

Stats = namedtuple("Stats", ["mean", "std", "hist"])

@dataclass
class Run:
    name: str
    values: np.ndarray
    extra: dict

x = np.linspace(0, 1, 20)
results = {"sq": x ** 2, "cube": x ** 3, "nested": {"half": x / 2}}
series = [x + k for k in range(3)]
pair = (x.min(), x.max())
st = Stats(x.mean(), x.std(), np.histogram(x, bins=4)[0])
run = Run("demo", np.sqrt(x), {"n": len(x), "last": x[-1]})
total = sum(v.sum() for v in series)
