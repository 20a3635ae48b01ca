"""Linear merge (Sec. V-E): one pass over the instruction list.

Each instruction joins the current block unless that would put a fuse-preventing edge in
it; then it starts a new block. Blocks are runs of consecutive instructions, so they can
never form a cycle.
"""

from __future__ import annotations

from typing import Any

from fusionlab.support.budget import Budget, BudgetExceeded
from fusionlab.partition._common import ProgramOrState, announce, cut_note, finish, setup
from fusionlab.partition.result import PartitionResult


def linear(
    program_or_state: ProgramOrState, cost_model: Any = "bohrium", *, budget: Budget | None = None
) -> PartitionResult:
    """Partition by a single pass in program order.

    The cost model does not steer the pass (it only prices the result). Cut by ``budget``,
    the instructions not reached yet stay in blocks of their own (the merges made so far
    are legal).

    Examples
    --------
    >>> from fusionlab.ir.examples import fig3
    >>> r = linear(fig3())
    >>> r.numbered()
    [[1, 2], [3, 4], [5, 6, 7, 8, 9], [10, 11, 12, 13, 14, 15, 16, 17]]
    """
    ctx = setup(program_or_state, cost_model, budget)
    notes, cut = [], ""
    try:
        linear_merge(ctx.state, ctx.budget)
    except LinearCut as exc:
        notes.append(cut_note(exc.cause, f"the last {exc.left} of {exc.total} starting blocks are left unmerged"))
        cut = exc.cause.phase
    return finish(ctx, "linear", ctx.state.blocks(), notes=notes, budget_cut=cut)


class LinearCut(Exception):
    """:func:`linear_merge` stopped by its budget with ``left`` of ``total`` starting
    blocks not reached (the merges made so far stay: they are legal)."""

    def __init__(self, cause: BudgetExceeded, left: int, total: int) -> None:
        super().__init__(str(cause))
        self.cause, self.left, self.total = cause, left, total


def linear_merge(state: Any, budget: Budget, phase: str = "linear: pass") -> None:
    """Merge ``state``'s blocks in place, in program order: each joins the current block
    when :meth:`can_merge` allows, else starts the next one. Raises :class:`LinearCut`."""
    order = sorted(state.members, key=lambda b: state.first[b])
    current = order[0] if order else None
    k = 0
    try:
        announce(budget, phase)
        for k, b in enumerate(order[1:], 1):
            budget.check(phase)
            # blocks of a given starting state may interleave; a merge must then also be acyclic
            if current is not None and state.can_merge(current, b):
                current = state.merge(current, b, reuse=True)
            else:
                current = b
    except BudgetExceeded as exc:
        raise LinearCut(exc, len(order) - k, len(order)) from exc
