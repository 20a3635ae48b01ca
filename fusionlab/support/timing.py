"""Wall-clock medians, the one timing rule every measurement here follows.

Examples
--------
>>> median_seconds(lambda: sum(range(100)), repeat=3) >= 0.0
True
"""

from __future__ import annotations

import statistics
import time
from typing import Any, Callable

__all__ = ["median_seconds"]


def median_seconds(fn: Callable[[], Any], repeat: int = 5, *, warmup: bool = True) -> float:
    """The median wall time of ``fn`` over ``repeat`` runs, after one untimed warm-up run
    (compilation, first-touch page faults) unless ``warmup=False``."""
    if warmup:
        fn()
    times = []
    for _ in range(max(1, repeat)):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)
