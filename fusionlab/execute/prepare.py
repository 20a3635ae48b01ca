"""The batches as the runner partitions them: their dead parts of writes dropped
(:mod:`fusionlab.deadwrites`), then rerolled (:mod:`fusionlab.reroll`), both within the
run's :class:`~fusionlab.budget.Budget`, as the explorer runs them.

Past the budget, what either pass did is kept and the rest stays as captured: dropping
nothing and rerolling nothing are always correct, only slower. A 100,000-iteration
``x += 1.0`` loop took 15.4 s of CPU in the two passes with no budget on a loaded
2-core machine (3.5-4.3 s for rerolling alone on a quiet one); with a 1 s budget, 1.1 s.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..budget import UNLIMITED, Budget, BudgetExceeded
from ..bytecode import Program
from ..deadwrites import describe, drop_dead_writes
from ..reroll import RerollRefusal, reroll_batches

__all__ = ["rerolled", "Prepared", "dead_dropped", "prepared_batches"]


def rerolled(batches: Sequence[Program], budget: Budget = UNLIMITED
             ) -> tuple[list[Program], dict[str, np.ndarray], list[str]]:
    """The batches rerolled (:mod:`fusionlab.reroll`), the arrays of the literals it made
    (inputs), and what it did, one line each (batch numbers from 1). Dead parts of writes are
    dropped first (:mod:`fusionlab.deadwrites`): rerolling joins instructions into coarser
    views (Jacobi's two wall rows into one), which the kill test sees less finely. Both
    passes stop at ``budget``: what they did is kept, the rest stays as captured."""
    prepared = prepared_batches(batches, budget)
    return prepared.programs, prepared.constants, prepared.lines + prepared.cut


@dataclass
class Prepared:
    """The batches as the runner partitions them: dead writes dropped, then rerolled."""

    programs: list[Program]
    constants: dict[str, np.ndarray]
    #: what rerolling did (:meth:`fusionlab.reroll.Reroll.summary`), and the dead-writes pass
    lines: list[str]
    rewrites: list[str]
    #: where the budget cut either pass (their notices), one line each
    cut: list[str]


def dead_dropped(batches: Sequence[Program], budget: Budget) -> tuple[list[Program], list[str], str]:
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


def prepared_batches(batches: Sequence[Program], budget: Budget = UNLIMITED) -> Prepared:
    """:func:`rerolled`, with what the dead-writes pass did before it (numbered as captured)
    and the passes' budget notices apart."""
    dropped, rewrites, dead_cut = dead_dropped(batches, budget)
    done = reroll_batches(dropped, budget=budget)
    lines = [f"batch {k + 1}: {line}" if len(done) > 1 else line for k, r in enumerate(done) for line in r.summary()]
    # the summary's own line for the cut (one per capture: the batches after it were not tried)
    first = next((k for k, r in enumerate(done) if any(f.reason is RerollRefusal.TIME_BUDGET for f in r.refusals)),
                 None)
    cut = [dead_cut] if dead_cut else []
    if first is not None:
        cut += [f"batch {first + 1}: {line}" if len(done) > 1 else line
                for line in done[first].summary() if line.startswith("rerolling stopped")]
        lines = [line for line in lines if "rerolling stopped" not in line]
    return Prepared([r.program for r in done], {k: v for r in done for k, v in r.constants.items()}, lines,
                     rewrites, cut)
