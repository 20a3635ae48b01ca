"""One time budget for a piece of work (a ``%%fuse`` cell, a command), passed explicitly.

Every phase that can take long (capture, each algorithm and its set-up, each cost model,
the SVG fallback, code generation) receives the :class:`Budget` of its caller, asks it for
its own limit with :meth:`Budget.limit` and calls :meth:`Budget.check` between units of
work. Nothing reads a global: a search given no budget runs with :data:`UNLIMITED`.

A budget that runs out raises :class:`BudgetExceeded` from :meth:`Budget.check`; a search
catches it and returns its best so far, marked not proven. Kernel -> Interrupt raises
``KeyboardInterrupt`` in the same Python code, so frequent checks also make the work
interruptible; work that runs long inside C (a solver, a layout) is given a real time limit
(:meth:`Budget.limit`) or runs in a subprocess that is killed.

Examples
--------
>>> b = Budget(10.0)
>>> 9.0 < b.remaining() <= 10.0
True
>>> b.limit(2.0)
2.0
>>> sub = b.child(0.0)              # a phase allowed no time at all
>>> sub.expired()
True
>>> try:
...     sub.check("greedy")
... except BudgetExceeded as exc:
...     print(exc.phase)
greedy
>>> UNLIMITED.remaining()
inf
"""

from __future__ import annotations

import math
import signal
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

__all__ = ["Budget", "BudgetExceeded", "Interrupt", "UNLIMITED"]


class BudgetExceeded(Exception):
    """The budget of ``phase`` ran out; the caller returns its best so far."""

    def __init__(self, phase: str, seconds: float | None = None) -> None:
        self.phase = phase
        self.seconds = seconds
        limit = f" of {seconds:g} s" if seconds is not None and math.isfinite(seconds) else ""
        super().__init__(f"{phase}: the time budget{limit} ran out")


class Interrupt:
    """Kernel -> Interrupt, remembered until the work has stopped for it.

    Kernel -> Interrupt raises ``KeyboardInterrupt`` wherever the main thread is. Where
    that is a finaliser (a generator closed by the garbage collector, a ``__del__``),
    Python prints "Exception ignored" and the work runs on. While :meth:`armed`, the
    interrupt is also recorded here, and every :class:`Budget` holding this object raises
    ``KeyboardInterrupt`` again at its next :meth:`Budget.check` until
    :meth:`acknowledge` says the interrupt was handled.

    Examples
    --------
    >>> intr = Interrupt()
    >>> budget = Budget(None, interrupt=intr)
    >>> intr.pending = True          # what the armed handler does, besides raising
    >>> try:
    ...     budget.child(5.0).check("optimal: search")
    ... except KeyboardInterrupt:
    ...     print("stopped")
    stopped
    >>> intr.acknowledge(); budget.check("display")   # handled: the work may go on
    """

    def __init__(self) -> None:
        self.pending = False

    def acknowledge(self) -> None:
        """The interrupt was handled (the work stopped and says so)."""
        self.pending = False

    @contextmanager
    def armed(self) -> Iterator["Interrupt"]:
        """Record SIGINT while the block runs (in the main thread; elsewhere Python
        delivers no signal, and this does nothing)."""
        if threading.current_thread() is not threading.main_thread():
            yield self
            return
        previous = signal.getsignal(signal.SIGINT)

        def handler(signum: int, frame: Any) -> None:
            self.pending = True
            if callable(previous):
                previous(signum, frame)
            raise KeyboardInterrupt

        signal.signal(signal.SIGINT, handler)
        try:
            yield self
        finally:
            signal.signal(signal.SIGINT, previous)


@dataclass
class Budget:
    """A deadline, measured on ``clock`` (``time.perf_counter`` by default).

    Parameters
    ----------
    seconds
        Time allowed from now; ``None`` or ``inf`` for no limit.
    on_phase
        Called with the name of each phase entered through :meth:`phase` (a progress line).
    started
        When the time started (on ``clock``; default now).
    interrupt
        An :class:`Interrupt` to honour at each check (and pass to children).
    clock
        The clock, in seconds (``time.perf_counter``; tests inject their own: a budget's
        decisions then follow counted steps, not the machine's load).

    Examples
    --------
    >>> ticks = iter([0.0, 4.0, 11.0])          # an injected clock: three readings
    >>> b = Budget(10.0, clock=lambda: next(ticks))
    >>> b.remaining(), b.expired()
    (6.0, True)
    """

    seconds: float | None = None
    on_phase: Callable[[str], None] | None = None
    started: float | None = None
    interrupt: Interrupt | None = None
    clock: Callable[[], float] = time.perf_counter
    deadline: float = field(init=False)

    def __post_init__(self) -> None:
        s = math.inf if self.seconds is None else float(self.seconds)
        if s < 0 or math.isnan(s):
            raise ValueError(f"a budget needs a non-negative number of seconds, not {self.seconds!r}")
        if self.started is None:
            self.started = self.clock()
        self.deadline = self.started + s

    def elapsed(self) -> float:
        """Seconds since the budget started."""
        return self.clock() - (self.started or 0.0)

    def remaining(self) -> float:
        """Seconds left (``inf`` when unlimited, never negative)."""
        return max(0.0, self.deadline - self.clock())

    def expired(self) -> bool:
        """Whether the deadline has passed."""
        return self.clock() >= self.deadline

    def check(self, phase: str = "work") -> None:
        """Raise :class:`BudgetExceeded` when the deadline has passed (``KeyboardInterrupt``
        when an interrupt is pending)."""
        if self.interrupt is not None and self.interrupt.pending:
            raise KeyboardInterrupt
        if self.clock() >= self.deadline:
            raise BudgetExceeded(phase, self.seconds)

    def limit(self, seconds: float | None = None) -> float:
        """The time a phase may take: its own limit ``seconds``, cut to what is left."""
        own = math.inf if seconds is None else float(seconds)
        return min(own, self.remaining())

    def child(self, seconds: float | None = None) -> "Budget":
        """A budget for one phase: at most ``seconds``, and never past this one's deadline."""
        # one reading of the clock for both the time left and the child's start: read twice,
        # the child's deadline would pass this one's by the time between the readings
        now = self.clock()
        own = math.inf if seconds is None else float(seconds)
        return Budget(min(own, max(0.0, self.deadline - now)), on_phase=self.on_phase, started=now,
                      interrupt=self.interrupt, clock=self.clock)

    @contextmanager
    def phase(self, name: str) -> Iterator["Budget"]:
        """Announce phase ``name`` (to ``on_phase``) and check the deadline on entry."""
        if self.on_phase is not None:
            self.on_phase(name)
        self.check(name)
        yield self


# An unlimited budget, for callers that pass none (it holds no state that changes).
UNLIMITED = Budget(None)
