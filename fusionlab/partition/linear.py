"""Linear merge (Sec. V-E): one pass over the instruction list.

Each instruction joins the current block unless that would put a fuse-preventing edge in
it; then it starts a new block. Blocks are runs of consecutive instructions, so they can
never form a cycle.
"""

from __future__ import annotations

from typing import Any

from ..budget import Budget, BudgetExceeded
from ._common import ProgramOrState, announce, cut_note, finish, setup
from .result import PartitionResult


def linear(
    program_or_state: ProgramOrState, cost_model: Any = "bohrium", *, budget: Budget | None = None
) -> PartitionResult:
    """Partition by a single pass in program order.

    The cost model does not steer the pass (it only prices the result). Cut by ``budget``,
    the instructions not reached yet stay in blocks of their own (the merges made so far
    are legal).

    Examples
    --------
    >>> from fusionlab.examples import fig3
    >>> r = linear(fig3())
    >>> r.numbered()
    [[1, 2], [3, 4], [5, 6, 7, 8, 9], [10, 11, 12, 13, 14, 15, 16, 17]]
    """
    ctx = setup(program_or_state, cost_model, budget)
    state = ctx.state
    order = sorted(state.members, key=lambda b: state.first[b])
    current = order[0] if order else None
    notes, cut = [], ""
    k = 0
    try:
        announce(ctx.budget, "linear: pass")
        for k, b in enumerate(order[1:], 1):
            ctx.budget.check("linear: pass")
            # blocks of a given starting state may interleave; a merge must then also be acyclic
            if current is not None and state.can_merge(current, b):
                current = state.merge(current, b, reuse=True)
            else:
                current = b
    except BudgetExceeded as exc:
        notes.append(cut_note(exc, f"the last {len(order) - k} of {len(order)} starting blocks are left unmerged"))
        cut = exc.phase
    return finish(ctx, "linear", state.blocks(), notes=notes, budget_cut=cut)
