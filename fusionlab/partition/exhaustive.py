"""Exhaustive search: every legal partition is priced; the oracle for small programs."""

from __future__ import annotations

from typing import Any

from fusionlab.support.budget import Budget, BudgetExceeded
from fusionlab.analysis.wsp import bit_indices, find_cycle
from fusionlab.partition._common import ProgramOrState, announce, cut_note, finish, setup
from fusionlab.partition.result import PartitionResult


def exhaustive(
    program_or_state: ProgramOrState, cost_model: Any = "bohrium", *, max_blocks: int = 11,
    budget: Budget | None = None,
) -> PartitionResult:
    """The cheapest legal partition, by enumerating all set partitions of the blocks.

    Set partitions are built block by block (restricted growth strings); a branch stops as
    soon as a fuse-preventing pair shares a block, and acyclicity is checked at the leaves.
    Bell(11) = 678,570 partitions is the default ceiling. Cut by ``budget`` (checked at
    every step of the enumeration), it returns the cheapest legal partition seen so far, or
    the starting one, not proven optimal.

    Examples
    --------
    >>> from fusionlab import parse
    >>> p = parse("ARRAY A float64[8]\\nARRAY B float64[8]\\nCOPY A, 1\\nMULTIPLY B, A, A\\nDEL A\\nSYNC B")
    >>> exhaustive(p).numbered(), exhaustive(p).cost
    ([[1, 2, 3, 4]], 64)
    """
    ctx = setup(program_or_state, cost_model, budget)
    budget = ctx.budget
    state, ev = ctx.state, ctx.evaluator
    ids = sorted(state.members, key=lambda b: state.first[b])
    m = len(ids)
    if m > max_blocks:
        raise ValueError(
            f"exhaustive search over {m} blocks is too large (Bell({m}) partitions); "
            f"use optimal or ilp, or raise max_blocks"
        )
    masks = [state.members[b] for b in ids]
    ok = [[state.forbidden_between(ids[a], ids[b]) is None for b in range(m)] for a in range(m)]
    pos = {b: k for k, b in enumerate(ids)}
    succ = [[pos[x] for x in state.succ[b]] for b in ids]
    best: tuple[float, list[list[int]]] | None = None
    groups: list[list[int]] = []
    label = [0] * m

    def leaf() -> None:
        nonlocal best
        g_succ: dict[int, set[int]] = {g: set() for g in range(len(groups))}
        for a in range(m):
            for b in succ[a]:
                if label[a] != label[b]:
                    g_succ[label[a]].add(label[b])
        if find_cycle(g_succ) is not None:
            return
        gmasks = [sum(masks[k] for k in g) for g in groups]
        cost = ev.cost_masks(gmasks)
        if best is None or cost < best[0] - 1e-9:
            best = (cost, [list(bit_indices(x)) for x in gmasks])

    def place(k: int) -> None:
        budget.check("exhaustive: enumeration")
        if k == m:
            leaf()
            return
        for g, members in enumerate(groups):
            if all(ok[k][j] for j in members):
                members.append(k)
                label[k] = g
                place(k + 1)
                members.pop()
        groups.append([k])
        label[k] = len(groups) - 1
        place(k + 1)
        groups.pop()

    try:
        announce(budget, "exhaustive: enumeration")
        place(0)
    except BudgetExceeded as exc:
        blocks = best[1] if best is not None else [list(bit_indices(x)) for x in masks]
        what = "the cheapest legal partition seen so far" if best is not None else "the starting partition"
        return finish(ctx, "exhaustive", blocks, notes=[cut_note(exc, f"returning {what}")], budget_cut=exc.phase)
    assert best is not None  # the starting partition itself is legal
    return finish(ctx, "exhaustive", best[1], proven_optimal=True)
