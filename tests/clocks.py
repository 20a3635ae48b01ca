"""An injected clock for budget tests: time that advances only when read."""

from __future__ import annotations


class Ticks:
    """An injected clock: one "second" per reading."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now
