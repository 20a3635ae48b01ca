"""An injected clock for budget tests: time that advances only when read (the package's
:class:`fusionlab.support.timing.Ticks`, one "second" per reading)."""

from __future__ import annotations

from fusionlab.support.timing import Ticks

__all__ = ["Ticks"]
