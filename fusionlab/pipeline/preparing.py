"""The preparing passes: a target's batches as the partitioner sees them.

:func:`prepare` runs, as the configuration asks, the dead-writes pass, rerolling, the early
frees across batches and the dead-writes pass again, each within the run's
:class:`~fusionlab.support.budget.Budget`. Past the budget, what a pass did is kept and the rest
stays as captured: dropping nothing and rerolling nothing are always correct, only slower.
A 100,000-iteration ``x += 1.0`` loop took 15.4 s of CPU in the first two passes with no
budget on a loaded 2-core machine (3.5-4.3 s for rerolling alone on a quiet one); with a
1 s budget, 1.1 s.

What each pass changed is returned with the batches (:class:`Prepared`), never found again
by running a pass a second time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import AbstractSet, Any, Mapping, Sequence

import numpy as np

from fusionlab.support.budget import UNLIMITED, Budget, BudgetExceeded
from fusionlab.ir.bytecode import Program
from fusionlab.passes.deadbases import describe_early, free_early
from fusionlab.passes.deadwrites import describe, drop_dead_writes
from fusionlab.runtime.reference import Externals
from fusionlab.passes.reroll import reroll_batches
from fusionlab.pipeline.config import Pass, PipelineConfig

__all__ = ["Prepared", "prepare", "prepare_batches", "dead_dropped", "target_parts"]


@dataclass(frozen=True)
class Prepared:
    """A target's batches after the preparing passes, with what the passes did.

    ``captured``: the batches as captured (the oracle replays these); ``programs``: as the
    partitioner sees them; ``inputs``: the run's inputs, with the arrays of the literals
    rerolling made (``constants``); ``rerolled``: what rerolling did, one line each;
    ``rewrites``: what the dead-writes passes and the early frees changed (batches numbered
    from 1); ``cut``: where the budget stopped a pass (the rest runs as captured).
    """

    captured: tuple[Program, ...]
    programs: tuple[Program, ...]
    inputs: Mapping[str, np.ndarray]
    constants: Mapping[str, np.ndarray]
    externals: Externals
    rerolled: tuple[str, ...] = ()
    rewrites: tuple[str, ...] = ()
    cut: tuple[str, ...] = ()


def target_parts(target: Any) -> tuple[list[Program], dict[str, np.ndarray], Externals]:
    """A :class:`~fusionlab.capture.Capture`'s batches, inputs and external values; a
    program alone is one batch with none."""
    from fusionlab.capture import Capture

    if isinstance(target, Capture):
        return list(target.batches), dict(target.inputs), target.externals
    return [target], {}, Externals()


def dead_dropped(batches: Sequence[Program], budget: Budget = UNLIMITED) -> tuple[list[Program], list[str], str]:
    """Each batch with its dead parts of writes dropped, what changed (numbered from 1), and
    where ``budget`` cut the pass ("" when it did not): the batch it ran out in and those
    after it stay as captured (dropping nothing is always correct, only slower)."""
    programs: list[Program] = []
    lines: list[str] = []
    for k, b in enumerate(batches):
        try:
            got = drop_dead_writes(b, budget)
        except BudgetExceeded:
            cut = (f"dead writes: the time budget ran out in batch {k + 1} of {len(batches)}: "
                   f"{'it runs' if k + 1 == len(batches) else 'it and the batches after it run'} as captured")
            return programs + list(batches[k:]), lines, cut
        programs.append(got.program)
        lines += [f"batch {k + 1}: {line}" for line in describe(b, got)]
    return programs, lines, ""


def prepare_batches(batches: Sequence[Program], config: PipelineConfig, keep: AbstractSet[str] = frozenset(),
                    budget: Budget = UNLIMITED) -> tuple[list[Program], dict[str, np.ndarray], list[str],
                                                         list[str], list[str]]:
    """The preparing passes on ``batches``: ``(programs, constants, rerolled, rewrites, cut)``.
    ``keep``: the run's inputs, never freed early."""
    programs, rewrites, cut = list(batches), [], []
    if config.runs(Pass.DEAD_WRITES):
        programs, lines, note = dead_dropped(programs, budget)
        rewrites += lines
        cut += [note] if note else []
    constants: dict[str, np.ndarray] = {}
    rerolled: list[str] = []
    if config.runs(Pass.REROLL):
        done = reroll_batches(programs, budget=budget)
        programs = [r.program for r in done]
        constants = {k: v for r in done for k, v in r.constants.items()}
        several = len(done) > 1
        rerolled = [f"batch {k + 1}: {line}" if several else line for k, r in enumerate(done)
                    for line in r.summary(with_cut=False)]
        # the line for the cut, once: the batches after it were not tried
        stopped = next((k for k, r in enumerate(done) if r.cut_line() is not None), None)
        if stopped is not None:
            line = done[stopped].cut_line()
            cut.append(f"batch {stopped + 1}: {line}" if several else str(line))
    moved: list[str] = []
    if config.runs(Pass.FREE_EARLY):
        early = free_early(programs, set(keep) | set(constants))
        programs = list(early.batches)
        moved = describe_early(early.moved)
    if config.runs(Pass.DEAD_WRITES_AFTER_FREE):
        programs, lines, note = dead_dropped(programs, budget)
        rewrites += lines
        cut += [note] if note and note not in cut else []
    rewrites += moved
    return programs, constants, rerolled, rewrites, cut


def prepare(target: Any, config: PipelineConfig, budget: Budget = UNLIMITED,
            inputs: Mapping[str, np.ndarray] | None = None) -> Prepared:
    """``target``'s batches through the preparing passes ``config`` turns on.

    ``inputs``: arrays given beside the target's own (never freed early either).

    Examples
    --------
    >>> from fusionlab.capture import capture
    >>> cap = capture("import numpy as np\\na = np.ones((4, 8))\\nfor i in range(4):\\n    a[i] = a[i] * 2.0 + 1.0")
    >>> p = prepare(cap, PipelineConfig())
    >>> len(p.captured[0]), len(p.programs[0]), p.rerolled[0]
    (22, 7, 'rerolled: 22 instructions -> 7')
    """
    batches, base_inputs, externals = target_parts(target)
    keep = set(base_inputs) | set(inputs or {})
    programs, constants, rerolled, rewrites, cut = prepare_batches(batches, config, keep, budget)
    return Prepared(tuple(batches), tuple(programs), {**base_inputs, **constants, **(inputs or {})}, constants,
                    externals, tuple(rerolled), tuple(rewrites), tuple(cut))
