"""The singleton partition: every instruction its own block (the paper's ⊥, no fusion)."""

from __future__ import annotations

from typing import Any

from ._common import ProgramOrState, finish, setup
from .result import PartitionResult


def singleton(program_or_state: ProgramOrState, cost_model: Any = "bohrium") -> PartitionResult:
    """Put every instruction in a block of its own.

    Examples
    --------
    >>> from fusionlab.examples import fig3
    >>> r = singleton(fig3())
    >>> r.kernels, r.cost_elements
    (17, 94)
    """
    ctx = setup(program_or_state, cost_model)
    return finish(ctx, "singleton", [[i] for i in range(ctx.graph.n)])
