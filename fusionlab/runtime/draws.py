"""The state of the process-wide random streams a program may draw from without a seed.

``np.random.rand`` and the other legacy functions draw from NumPy's global ``RandomState``
(npbench's MLP draws its input that way, unseeded), and ``random.random`` from Python's. A
program run twice in one process, plainly and captured, draws different numbers unless
both runs start from the same state: a check that compares them saves the state before the
first and restores it before the second (:func:`fusionlab.runtime.check.plain_namespace`).
Generators a program makes itself (``np.random.default_rng()`` without a seed) draw from
the operating system's entropy and cannot be replayed.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["GlobalDraws", "global_draws"]


@dataclass(frozen=True)
class GlobalDraws:
    """NumPy's global ``RandomState`` state and Python's ``random`` state at one moment.

    >>> s = global_draws()
    >>> a = np.random.rand(3)
    >>> s.restore()
    >>> bool((np.random.rand(3) == a).all())
    True
    """

    numpy: Any
    python: Any

    def restore(self) -> None:
        """Put both streams back where they were."""
        np.random.set_state(self.numpy)
        random.setstate(self.python)


def global_draws() -> GlobalDraws:
    """The global streams' state now."""
    return GlobalDraws(np.random.get_state(), random.getstate())
