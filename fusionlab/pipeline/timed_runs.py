"""The timed runs of a comparison within a time budget ("Compile & time", issue 13).

A timed run is a run of the whole cell, the user's code: it is never cut in the middle, so
the budget decides *before* each run whether it fits. Every row (NumPy eager first, then
each fused partition) gets a share of what is left (the seconds left over the rows still to
time) and as many of the ``repeat`` runs as fit in it, predicted from one run's time; at
least one when one fits in all that is left, so a long cell still gets its rows timed once.
A row taking fewer runs than asked says so; a row none of whose runs fit is not timed, with
the reason. Between runs an armed :class:`~fusionlab.support.budget.Interrupt` is honoured (Kernel
-> Interrupt ends the comparison between two runs and keeps the rows timed).

NumPy's warm-up of a long cell (:data:`LONG_RUN_SECONDS` or more) is one of its samples when
the share allows fewer runs than asked: what a warm-up warms (imports, the first touch of
memory a later run allocates afresh anyway) is small beside a run that long. A fused row's
warm-up compiles its kernels and never counts; it belongs to the compile budget.

Examples
--------
>>> now = [0.0]
>>> def clock() -> float:
...     return now[0]
>>> def cell() -> None:              # a cell whose every run takes 4 s on the injected clock
...     now[0] += 4.0
>>> runs = RunBudget(10.0, repeat=3, clock=clock)
>>> runs.count(4.0, rows_left=1), runs.count(4.0, rows_left=3), runs.count(11.0, rows_left=1)
(2, 1, 0)
>>> times, last, note = runs.timed(cell, 2)
>>> times, runs.remaining()
([4.0, 4.0], 2.0)
>>> runs.fewer(1, 4.0)
'1 of 3 timed runs: the time budget of 10 s for the runs leaves no time for more (one run takes about 4 s)'
"""

from __future__ import annotations

import math
from typing import Any, Callable

from fusionlab.support.budget import Budget, Interrupt

__all__ = ["RunBudget", "LONG_RUN_SECONDS", "CHECK_RUNS"]

# A NumPy warm-up this long is one of NumPy's samples when the budget allows fewer runs.
LONG_RUN_SECONDS = 1.0
# The check against plain NumPy, in NumPy runs: one plain run of the cell and the reference
# replay with its error bounds (runtime/errors.py evaluates each element-wise instruction
# several times over, shifted). Measured (quiet machine): 56x a plain run on 10^6 elements
# (sqrt(x) * 2 + x, sum), 85x on 10^7, 63x on a 500 x 500 heat cell, 109x on LU n = 30.
CHECK_RUNS = 100.0


class RunBudget:
    """The seconds the runs of one comparison may take together (``None``: no limit).

    Only the runs count (and the check, :meth:`spend`): the time spent compiling between
    them is the compile budget's, so a cell whose kernels take the compile budget still
    has its runs.

    Parameters
    ----------
    seconds
        The runs' time budget, or a :class:`~fusionlab.support.budget.Budget` (its seconds, clock
        and interrupt).
    repeat
        Runs each row asks for.
    interrupt
        An armed :class:`~fusionlab.support.budget.Interrupt`, checked between runs.
    clock
        Measures the runs and the budget (``time.perf_counter``; tests inject their own).
    """

    def __init__(self, seconds: float | Budget | None, repeat: int, interrupt: Interrupt | None = None,
                 clock: Callable[[], float] | None = None) -> None:
        if isinstance(seconds, Budget):
            budget = seconds
        else:
            budget = Budget(seconds, interrupt=interrupt, **({} if clock is None else {"clock": clock}))
        self.seconds = math.inf if budget.seconds is None else float(budget.seconds)
        self.interrupt = budget.interrupt
        self.clock = budget.clock
        self.repeat = max(int(repeat), 1)
        #: seconds the runs (and the check) took so far
        self.spent = 0.0
        #: one fused run's seconds, as last measured (NumPy's until a fused row is timed)
        self.estimate: float | None = None
        #: one NumPy run's seconds (what the check's cost is predicted from)
        self.numpy: float | None = None

    def remaining(self) -> float:
        """Seconds left for runs (``inf`` without a budget, never negative)."""
        return max(self.seconds - self.spent, 0.0)

    def spend(self, seconds: float) -> None:
        """Count ``seconds`` of runs (a warm-up of NumPy's, the check)."""
        self.spent += seconds

    def fits(self, seconds: float) -> bool:
        """Whether work of ``seconds`` fits in what is left."""
        return seconds <= self.remaining()

    def described(self) -> str:
        """"the time budget of 30 s for the runs" (for the rows' reasons)."""
        return f"the time budget of {self.seconds:g} s for the runs"

    def count(self, one: float, rows_left: int, at_least_one: bool = True) -> int:
        """Runs of ``one`` seconds each a row may take: as many of ``repeat`` as fit in its
        share of what is left (what is left over ``rows_left`` rows, this one included);
        at least one (with ``at_least_one``) when one fits in all that is left."""
        left = self.remaining()
        if not math.isfinite(left) or one <= 0:
            return self.repeat
        if one > left:
            return 0
        share = int(left / max(rows_left, 1) // one)
        return min(self.repeat, max(share, 1 if at_least_one else 0))

    def timed(self, fn: Callable[[], Any], runs: int) -> tuple[list[float], Any, str]:
        """Up to ``runs`` timed calls of ``fn``: their seconds, the last call's value, and
        why fewer ran (a run took longer than predicted: the next would not fit)."""
        times: list[float] = []
        last = None
        for _ in range(runs):
            if self.interrupt is not None and self.interrupt.pending:
                raise KeyboardInterrupt  # Kernel -> Interrupt between two runs
            if times and max(times) > self.remaining():
                return times, last, self.fewer(len(times), max(times))
            t = self.clock()
            last = fn()
            times.append(self.clock() - t)
            self.spend(times[-1])
        return times, last, ""

    def fewer(self, runs: int, one: float, warm_up: bool = False) -> str:
        """Why a row has ``runs`` of the runs asked for ("" when it has them all)."""
        if runs >= self.repeat:
            return ""
        counted = " (the warm-up counted as one)" if warm_up else ""
        return (f"{runs} of {self.repeat} timed runs{counted}: {self.described()} leaves no time for more "
                f"(one run takes about {one:.2g} s)")
