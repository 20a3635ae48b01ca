"""The singleton partition: every instruction its own block (the paper's ⊥, no fusion)."""

from __future__ import annotations

from typing import Any

from fusionlab.support.budget import Budget
from fusionlab.partition._common import ProgramOrState, finish, setup
from fusionlab.partition.result import PartitionResult


def singleton(
    program_or_state: ProgramOrState, cost_model: Any = "bohrium", *, budget: Budget | None = None
) -> PartitionResult:
    """Put every instruction in a block of its own.

    It is the fallback of every other algorithm, so ``budget`` only bounds building the
    graph of a program: the partition itself is linear and always completes.

    Examples
    --------
    >>> from fusionlab.ir.examples import fig3
    >>> r = singleton(fig3())
    >>> r.kernels, r.cost_elements
    (17, 94)
    """
    ctx = setup(program_or_state, cost_model, budget)
    return finish(ctx, "singleton", [[i] for i in range(ctx.graph.n)])
