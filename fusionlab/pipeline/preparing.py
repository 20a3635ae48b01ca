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
from fusionlab.passes.deadbases import free_early, rewrites_early
from fusionlab.passes.deadwrites import drop_dead_writes, rewrites_of
from fusionlab.passes.rewrites import Rewrite, RewriteKind, RewritePass
from fusionlab.runtime.reference import Externals
from fusionlab.passes.reroll import reroll_batches
from fusionlab.pipeline.config import Pass, PipelineConfig

__all__ = ["Prepared", "prepare", "prepare_batches", "dead_dropped", "target_parts", "REROLL_PASSES"]

#: the passes a run without rerolling leaves out (``run``'s and ``compare``'s rows'
#: ``reroll=False``, :func:`fusionlab.pipeline.runner.run_config`; the explorer's session asks
#: for the same, so it shares Compile & time's prepared batches): the dead-writes pass before
#: rerolling is there to make more runs regular
REROLL_PASSES: tuple[Pass, ...] = (Pass.DEAD_WRITES, Pass.REROLL)


@dataclass(frozen=True)
class Prepared:
    """A target's batches after the preparing passes, with what the passes did.

    ``captured``: the batches as captured (the oracle replays these); ``programs``: as the
    partitioner sees them; ``inputs``: the run's inputs, with the arrays of the literals
    rerolling made (``constants``); ``rerolled``: what rerolling did; ``rewrites``: what the
    dead-writes passes and the early frees changed; ``cut``: where the budget stopped a pass
    (the rest runs as captured). Each a :class:`~fusionlab.passes.rewrites.Rewrite` record
    (its ``describe()`` the line shown; decide by its ``kind``).
    """

    captured: tuple[Program, ...]
    programs: tuple[Program, ...]
    inputs: Mapping[str, np.ndarray]
    constants: Mapping[str, np.ndarray]
    externals: Externals
    rerolled: tuple[Rewrite, ...] = ()
    rewrites: tuple[Rewrite, ...] = ()
    cut: tuple[Rewrite, ...] = ()


def target_parts(target: Any) -> tuple[list[Program], dict[str, np.ndarray], Externals]:
    """A :class:`~fusionlab.capture.Capture`'s batches, inputs and external values; a
    program alone is one batch with none."""
    from fusionlab.capture import Capture

    if isinstance(target, Capture):
        return list(target.batches), dict(target.inputs), target.externals
    return [target], {}, Externals()


def dead_dropped(batches: Sequence[Program],
                 budget: Budget = UNLIMITED) -> tuple[list[Program], list[Rewrite], Rewrite | None]:
    """Each batch with its dead parts of writes dropped, what changed, and where ``budget``
    cut the pass (a :attr:`~RewriteKind.BUDGET_CUT` record; ``None`` when it did not): the
    batch it ran out in and those after it stay as captured (dropping nothing is always
    correct, only slower).

    >>> from fusionlab import parse
    >>> p = parse("ARRAY a float64[4]\\nCOPY a, 0\\nCOPY a, 1.0\\nSYNC a")
    >>> _, done, cut = dead_dropped([p, p])
    >>> [(r.kind.name, r.batch, r.instruction) for r in done], cut
    ([('WRITE_REMOVED', 0, 0), ('WRITE_REMOVED', 1, 0)], None)
    >>> print(dead_dropped([p, p], Budget(0.0))[2])
    dead writes: the time budget ran out in batch 1 of 2: it and the batches after it run as captured
    """
    programs: list[Program] = []
    records: list[Rewrite] = []
    for k, b in enumerate(batches):
        try:
            got = drop_dead_writes(b, budget)
        except BudgetExceeded:
            cut = Rewrite(RewriteKind.BUDGET_CUT, k, None, (
                f"dead writes: the time budget ran out in batch {k + 1} of {len(batches)}: "
                f"{'it runs' if k + 1 == len(batches) else 'it and the batches after it run'} as captured"),
                RewritePass.DEAD_WRITES, len(batches))
            return programs + list(batches[k:]), records, cut
        programs.append(got.program)
        records += rewrites_of(b, got, k, len(batches))
    return programs, records, None


def prepare_batches(batches: Sequence[Program], config: PipelineConfig, keep: AbstractSet[str] = frozenset(),
                    budget: Budget = UNLIMITED) -> tuple[list[Program], dict[str, np.ndarray], list[Rewrite],
                                                         list[Rewrite], list[Rewrite]]:
    """The preparing passes on ``batches``: ``(programs, constants, rerolled, rewrites, cut)``,
    the last three :class:`~fusionlab.passes.rewrites.Rewrite` records. ``keep``: the run's
    inputs, never freed early."""
    programs = list(batches)
    rewrites: list[Rewrite] = []
    cut: list[Rewrite] = []
    if config.runs(Pass.DEAD_WRITES):
        programs, records, stop = dead_dropped(programs, budget)
        rewrites += records
        cut += [stop] if stop is not None else []
    constants: dict[str, np.ndarray] = {}
    rerolled: list[Rewrite] = []
    if config.runs(Pass.REROLL):
        done = reroll_batches(programs, budget=budget)
        programs = [r.program for r in done]
        constants = {k: v for r in done for k, v in r.constants.items()}
        reported = [x for k, r in enumerate(done) for x in r.rewrites(k, len(done))]
        rerolled = [x for x in reported if x.kind is not RewriteKind.BUDGET_CUT]
        # the cut, once: the batches after it were not tried (each has its own cut record)
        cut += [x for x in reported if x.kind is RewriteKind.BUDGET_CUT][:1]
    moved: list[Rewrite] = []
    if config.runs(Pass.FREE_EARLY):
        early = free_early(programs, set(keep) | set(constants))
        programs = list(early.batches)
        moved = rewrites_early(early.moved, len(programs))
    if config.runs(Pass.DEAD_WRITES_AFTER_FREE):
        programs, records, stop = dead_dropped(programs, budget)
        rewrites += records
        # the same cut as the first pass's (same batch) is said once
        cut += [stop] if stop is not None and stop not in cut else []
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
    >>> len(p.captured[0]), len(p.programs[0]), p.rerolled[0].kind.name, p.rerolled[0].describe()
    (22, 7, 'REROLLED', 'rerolled: 22 instructions -> 7')
    """
    batches, base_inputs, externals = target_parts(target)
    keep = set(base_inputs) | set(inputs or {})
    programs, constants, rerolled, rewrites, cut = prepare_batches(batches, config, keep, budget)
    return Prepared(tuple(batches), tuple(programs), {**base_inputs, **constants, **(inputs or {})}, constants,
                    externals, tuple(rerolled), tuple(rewrites), tuple(cut))
