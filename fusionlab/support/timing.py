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

__all__ = ["median_seconds", "Ticks"]


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


class Ticks:
    """An injected clock that moves one "second" per reading: timings and budgets checked
    on it give the same figures on any machine (examples, tests).

    >>> clock = Ticks()
    >>> clock(), clock()
    (1.0, 2.0)
    """

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now
