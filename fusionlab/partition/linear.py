"""Linear merge (Sec. V-E): one pass over the instruction list.

Each instruction joins the current block unless that would put a fuse-preventing edge in
it; then it starts a new block. Blocks are runs of consecutive instructions, so they can
never form a cycle.
"""

from __future__ import annotations

from typing import Any

from ._common import ProgramOrState, finish, setup
from .result import PartitionResult


def linear(program_or_state: ProgramOrState, cost_model: Any = "bohrium") -> PartitionResult:
    """Partition by a single pass in program order.

    The cost model does not steer the pass (it only prices the result).

    Examples
    --------
    >>> from fusionlab.examples import fig3
    >>> r = linear(fig3())
    >>> r.numbered()
    [[1, 2], [3, 4], [5, 6, 7, 8, 9], [10, 11, 12, 13, 14, 15, 16, 17]]
    """
    ctx = setup(program_or_state, cost_model)
    state = ctx.state
    order = sorted(state.members, key=lambda b: state.first[b])
    current = order[0] if order else None
    for b in order[1:]:
        # blocks of a given starting state may interleave; a merge must then also be acyclic
        if current is not None and state.merge_problem(current, b) is None:
            current = state.merge(current, b)
        else:
            current = b
    return finish(ctx, "linear", state.blocks())
