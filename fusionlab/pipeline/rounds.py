"""The timing protocol: every variant timed in interleaved rounds, the order rotated each round.

A comparison that times NumPy's runs first and each fused row's after it blames the first
row for the machine's warming up: one four-op chain that fuses into the same single
kernel under all four cost models timed 2.06x, 9.34x, 5.36x and 5.94x NumPy in one
``compare`` run (issue 34), the row timed first always the slow one. Here each variant has
had its own warm-up (NumPy's first run; a fused row's first run, which compiles) before
:func:`interleave` starts; then one untimed warm-up round when the budget allows two
rounds, then up to ``repeat`` rounds, in each of which every variant runs once, round
``r`` starting with variant ``r mod n``. What a drifting machine does to one variant it
does to all, and the ratio of round ``r``'s times cancels it (the intervals of
:mod:`fusionlab.support.intervals` resample whole rounds).

A round starts only when its predicted time (each variant's last run) fits in what the
run budget has left (:class:`~fusionlab.pipeline.timed_runs.RunBudget`); when not even one
round fits, each variant that fits by itself runs once (a long cell still gets its rows
timed once). Kernel -> Interrupt between two runs ends the rounds: a round cut in the
middle is dropped, so every variant keeps the same rounds.

Examples
--------
>>> from fusionlab.pipeline.timed_runs import RunBudget
>>> now = [0.0]
>>> def takes(seconds: float):
...     def run() -> None:
...         now[0] += seconds
...     return run
>>> a, b = Variant("numpy", takes(2.0), 2.0), Variant("fused", takes(1.0), 1.0)
>>> done = interleave([a, b], RunBudget(None, 3, clock=lambda: now[0]), 3)
>>> done.rounds, done.warmup_rounds, a.times(), b.times(), done.orders
(3, 1, [2.0, 2.0, 2.0], [1.0, 1.0, 1.0], [['numpy', 'fused'], ['fused', 'numpy'], ['numpy', 'fused']])
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from fusionlab.pipeline.timed_runs import RunBudget

__all__ = ["Variant", "Rounds", "interleave", "rotated"]


@dataclass
class Variant:
    """One thing a comparison times: NumPy eager, or a fused row's kernels (rows with the
    same kernels share one variant).

    ``estimate`` is one run's seconds as last measured (its warm-up's at first, which for
    a fused row includes compiling: an upper bound); ``samples`` the timed runs by round.
    """

    label: str
    run: Callable[[], Any]
    estimate: float
    samples: dict[int, float] = field(default_factory=dict)
    #: the last run's value (the fused rows' synced arrays)
    last: Any = None
    #: the seconds of its own warm-up run (before the rounds)
    warm_up: float = 0.0

    def times(self) -> list[float]:
        """The timed runs' seconds, in round order."""
        return [self.samples[r] for r in sorted(self.samples)]


@dataclass
class Rounds:
    """What :func:`interleave` did: the rounds every variant completed, the untimed warm-up
    rounds, each round's order, and why fewer rounds ran than asked ("" when all ran)."""

    rounds: int
    warmup_rounds: int
    orders: list[list[str]]
    fewer: str = ""
    interrupted: bool = False

    def paired(self, a: Variant, b: Variant) -> tuple[list[float], list[float]]:
        """The times of ``a`` and ``b`` in the rounds both ran, in round order."""
        both = sorted(set(a.samples) & set(b.samples))
        return [a.samples[r] for r in both], [b.samples[r] for r in both]


def rotated(items: Sequence[Any], k: int) -> list[Any]:
    """``items`` starting at index ``k mod len(items)``.

    >>> rotated("abc", 4)
    ['b', 'c', 'a']
    """
    n = len(items)
    return [items[(k + i) % n] for i in range(n)] if n else []


def interleave(variants: Sequence[Variant], runs: RunBudget, repeat: int, warmup: bool = True) -> Rounds:
    """Time ``variants`` in up to ``repeat`` interleaved rounds within ``runs`` (see the
    module's text); their ``samples``, ``estimate`` and ``last`` are filled in."""
    done = Rounds(0, 0, [])
    if not variants:
        return done
    try:
        if warmup and _fits(variants, runs, times=2):
            _round(variants, runs, None)
            done.warmup_rounds = 1
        while done.rounds < repeat and _fits(variants, runs):
            order = rotated(variants, done.rounds)
            _round(order, runs, done.rounds)
            done.orders.append([v.label for v in order])
            done.rounds += 1
        if done.rounds == 0:   # not even one round: each variant that fits alone runs once
            for v in variants:
                if v.estimate <= runs.remaining():
                    _one(v, runs, 0)
            done.orders.append([v.label for v in variants if 0 in v.samples])
    except KeyboardInterrupt:
        done.interrupted = True
        for v in variants:   # a round cut in the middle is dropped: every variant keeps the same rounds
            v.samples.pop(done.rounds, None)
    if done.rounds < repeat and not done.interrupted:
        cost = sum(v.estimate for v in variants)
        done.fewer = (f"{done.rounds} of {repeat} rounds: {runs.described()} leaves no time for more "
                      f"(a round of {len(variants)} variant{'s' if len(variants) != 1 else ''} takes about {cost:.2g} s)")
    return done


def _fits(variants: Sequence[Variant], runs: RunBudget, times: int = 1) -> bool:
    cost = sum(v.estimate for v in variants)
    left = runs.remaining()
    return not math.isfinite(left) or cost * times <= left


def _round(order: Sequence[Variant], runs: RunBudget, timed: int | None) -> None:
    for v in order:
        _one(v, runs, timed)


def _one(v: Variant, runs: RunBudget, timed: int | None) -> None:
    """One run of ``v`` (kept as round ``timed``'s sample unless ``None``: a warm-up)."""
    if runs.interrupt is not None and runs.interrupt.pending:
        raise KeyboardInterrupt  # Kernel -> Interrupt between two runs
    t = runs.clock()
    v.last = v.run()
    seconds = runs.clock() - t
    runs.spend(seconds)
    v.estimate = seconds
    if timed is not None:
        v.samples[timed] = seconds
