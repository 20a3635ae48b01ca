"""Greedy merge (Fig. 7): repeatedly merge over the heaviest legal weight edge.

Weight edges join blocks whose merge saves (Def. 15). They live in a heap; an edge whose
merge is illegal is dropped (Fig. 7, line 7), and a merge pushes fresh edges for the new
block, so an edge dropped for a cycle comes back once the blocks on the path have merged.
"""

from __future__ import annotations

import heapq
from typing import Any

from ..costs import Evaluator
from ..wsp import PartitionState
from ._common import BaseIndex, ProgramOrState, dense, finish, setup
from .result import PartitionResult

_EPS = 1e-9


def greedy_merge(
    state: PartitionState, ev: Evaluator, gas: int | None = None, zero_edges: bool = True
) -> list[tuple[int, int]]:
    """Run the greedy loop on ``state`` in place; returns the merges made (block id pairs).

    With ``zero_edges`` the weight edges include the merges that save nothing between blocks
    sharing an array or a dependency (taken last, after every saving merge), as Def. 15's
    complete weight graph and Bohrium's greedy fuser do: they cost nothing and leave fewer
    kernels.

    ``gas`` bounds the heap operations (default: generous, quadratic in the block count);
    running out raises ``RuntimeError`` rather than looping for ever.
    """
    index = BaseIndex(state)
    everyone = dense(ev)
    heap: list[tuple[float, int, int, int, int]] = []
    merges: list[tuple[int, int]] = []
    n = len(state.members)
    gas = gas if gas is not None else 50 * (n + 1) ** 2 + 10_000

    def candidates(b: int) -> list[int]:
        # a forbidden pair can never merge: skip it before pricing the merge
        near = state.members if everyone else index.partners(b) | state.neighbours(b)
        return [x for x in near if x != b and state.compatible(b, x)]

    def others(b: int, x: int) -> list[int]:
        return [] if ev.additive else [m for k, m in state.members.items() if k not in (b, x)]

    def push(b: int, x: int) -> None:
        s = ev.saving(state.members[b], state.members[x], others(b, x))
        if s > _EPS or (zero_edges and s > -_EPS):
            f1, f2 = sorted((state.first[b], state.first[x]))
            heapq.heappush(heap, (-max(s, 0.0), f1, f2, b, x))

    for b in sorted(state.members):
        for x in candidates(b):
            if x > b:
                push(b, x)
    while heap:
        gas -= 1
        if gas < 0:
            raise RuntimeError("greedy ran out of gas; this is a bug, please report it")
        neg, _, _, b, x = heapq.heappop(heap)
        if b not in state.members or x not in state.members:
            continue  # a stale edge of a block that has since merged
        if not ev.additive:
            s = ev.saving(state.members[b], state.members[x], others(b, x))
            if abs(max(s, 0.0) + neg) > _EPS:
                push(b, x)
                continue
        if not state.can_merge(b, x):
            continue
        ev.merged(state.members[b], state.members[x])
        z = state.merge(b, x)
        index.merged(b, x, z)
        merges.append((b, x))
        for y in candidates(z):
            push(z, y)
    return merges


def greedy(
    program_or_state: ProgramOrState, cost_model: Any = "bohrium", *, zero_edges: bool = True
) -> PartitionResult:
    """Partition by greedy merging over the heaviest weight edge.

    ``zero_edges=False`` stops when no merge saves (the sparse reading of Fig. 4).

    Examples
    --------
    >>> from fusionlab.examples import fig3
    >>> r = greedy(fig3(), "bohrium")
    >>> r.legal, r.cost_elements
    (True, 38)
    """
    ctx = setup(program_or_state, cost_model)
    greedy_merge(ctx.state, ctx.evaluator, zero_edges=zero_edges)
    return finish(ctx, "greedy", ctx.state.blocks())
