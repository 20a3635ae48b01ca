"""Steps between partitions: greedy's merges replayed one by one, and a fusion waterfall.

Two things a teacher explains at the board:

- :func:`greedy_replay`: greedy's merges (Fig. 7) in the order it made them, each with the
  two blocks it joined, the edge's saving and the cost after it;
- :func:`waterfall`: which steps turn partition ``a`` into partition ``b`` and what each costs.
  It splits ``a``'s blocks down to the pieces both partitions agree on (their common
  refinement: each piece is a block of ``a`` intersected with a block of ``b``), then merges
  the pieces up into ``b``'s blocks. The steps' cost changes add up to ``cost(b) - cost(a)``
  exactly: each is the difference of two partitions' costs under the same model.

Every partition on the way is legal, so each step is one the explorer could show:

- a piece is a subset of a block of ``a`` and of ``b``, so no fuse-preventing edge lies inside
  one, nor inside any group of pieces of one block;
- splitting off a block's pieces last-first in topological order of the pieces, and merging
  pieces in topological order into their block of ``b``, never closes a cycle: a cycle among
  the partition's blocks would map onto one in ``a`` (or ``b``), or among the pieces of one
  block, and both are acyclic (docs/explorer.md, "Replay and waterfall").

Both return :class:`Step` records; :func:`steps_data` makes them the report's JSON.

Examples
--------
>>> from fusionlab.ir.examples import fig3
>>> from fusionlab.partition import partition
>>> p = fig3()
>>> steps = greedy_replay(p, "bohrium")
>>> [s.kind.value for s in steps[:2]], steps[0].cost_before > steps[-1].cost_after
(['merge', 'merge'], True)
>>> a = partition(p, "singleton", "bohrium").blocks
>>> b = partition(p, "greedy", "bohrium").blocks
>>> w = waterfall(p, a, b, "bohrium")   # bytes: 94 and 38 elements of 8 bytes
>>> w[0].cost_before, w[-1].cost_after, sum(s.change for s in w)
(752, 304, -448)
"""

from __future__ import annotations

import enum
import heapq
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from fusionlab.analysis.wsp import PartitionState, WSPGraph
from fusionlab.costs import Evaluator, get_cost_model
from fusionlab.ir.bytecode import Program
from fusionlab.partition.greedy import greedy_merge
from fusionlab.support.budget import UNLIMITED, Budget, BudgetExceeded

__all__ = ["StepKind", "Step", "greedy_replay", "waterfall", "common_refinement", "partitions_along", "steps_data",
           "MAX_STEPS"]

#: more steps than this are not listed in a report (a replay of a 10,000-instruction loop
#: is not read step by step; the report says how many there were)
MAX_STEPS = 400


class StepKind(enum.Enum):
    """What a step does to the partition."""

    MERGE = "merge"   # ``moved`` joins ``into``
    SPLIT = "split"   # ``moved`` leaves ``into``, which keeps the rest


@dataclass(frozen=True)
class Step:
    """One step: ``moved`` (0-based instructions) joins or leaves ``into``; the costs are the
    partition's before and after, under the step's cost model."""

    kind: StepKind
    into: tuple[int, ...]
    moved: tuple[int, ...]
    cost_before: float
    cost_after: float

    @property
    def change(self) -> float:
        """The cost after less the cost before (negative: the step saves)."""
        return self.cost_after - self.cost_before

    def describe(self) -> str:
        """One line, instructions numbered from 1.

        >>> Step(StepKind.MERGE, (0, 1), (2,), 10.0, 7.0).describe()
        'merge {3} into {1,2}: saves 3'
        """
        into, moved = _label(self.into), _label(self.moved)
        what = f"merge {moved} into {into}" if self.kind is StepKind.MERGE else f"split {moved} off {into}"
        change = self.change
        return f"{what}: {'saves' if change <= 0 else 'costs'} {abs(change):,.4g}"


def _label(ins: Iterable[int]) -> str:
    return "{" + ",".join(str(i + 1) for i in sorted(ins)) + "}"


class _RecordingState(PartitionState):
    """A partition state that writes down the blocks of each merge before making it."""

    def __init__(self, graph: WSPGraph) -> None:
        super().__init__(graph)
        self.pairs: list[tuple[int, int]] = []

    def merge(self, b1: int, b2: int, *, reuse: bool = False) -> int:
        self.pairs.append((self.members[b1], self.members[b2]))
        return super().merge(b1, b2, reuse=reuse)


def _graph(program_or_graph: Program | WSPGraph, budget: Budget) -> WSPGraph:
    return program_or_graph if isinstance(program_or_graph, WSPGraph) else WSPGraph(program_or_graph, budget=budget)


def _bits(mask: int) -> tuple[int, ...]:
    out, i = [], 0
    while mask:
        if mask & 1:
            out.append(i)
        mask >>= 1
        i += 1
    return tuple(out)


def greedy_replay(program_or_graph: Program | WSPGraph, cost_model: Any = "bohrium", *,
                  budget: Budget = UNLIMITED) -> list[Step]:
    """Greedy's merges (:func:`fusionlab.partition.greedy.greedy`, with its zero-saving
    merges last) in its order; each step's ``cost_before - cost_after`` is the edge's saving.

    ``budget`` bounds greedy as it does the explorer's row; a cut replay ends where greedy stopped.
    """
    graph = _graph(program_or_graph, budget)
    model = get_cost_model(cost_model)
    state = _RecordingState(graph)
    try:
        greedy_merge(state, Evaluator(model, graph), zero_edges=True, budget=budget)
    except BudgetExceeded:   # a cut greedy keeps the merges made so far, as greedy() does
        pass
    # the costs along the way, each partition priced whole by a fresh evaluator
    ev = Evaluator(model, graph)
    blocks: dict[int, int] = {1 << i: 1 << i for i in range(graph.n)}   # a block by its mask
    cost = ev.cost_masks(blocks)
    steps = []
    for m1, m2 in state.pairs:
        del blocks[m1], blocks[m2]
        blocks[m1 | m2] = m1 | m2
        after = ev.cost_masks(blocks)
        big, small = (m1, m2) if m1.bit_count() >= m2.bit_count() else (m2, m1)
        steps.append(Step(StepKind.MERGE, _bits(big), _bits(small), cost, after))
        cost = after
    return steps


def common_refinement(a: Sequence[Sequence[int]], b: Sequence[Sequence[int]]) -> list[tuple[int, ...]]:
    """The pieces both partitions agree on: each nonempty intersection of a block of ``a``
    with a block of ``b``, ordered by first instruction.

    >>> common_refinement([(0, 1, 2), (3,)], [(0,), (1, 2, 3)])
    [(0,), (1, 2), (3,)]
    """
    where = {i: k for k, blk in enumerate(b) for i in blk}
    pieces: dict[tuple[int, int], list[int]] = {}
    for j, blk in enumerate(a):
        for i in blk:
            pieces.setdefault((j, where[i]), []).append(i)
    return sorted(tuple(sorted(p)) for p in pieces.values())


def _topological(pieces: list[tuple[int, ...]], graph: WSPGraph) -> list[int]:
    """The pieces' indices in an order where every dependency goes forward (the pieces'
    contracted graph is acyclic: each is part of a block of a legal partition)."""
    of = {i: k for k, p in enumerate(pieces) for i in p}
    succ: dict[int, set[int]] = {k: set() for k in range(len(pieces))}
    indeg = [0] * len(pieces)
    for u, v in graph.dependencies:
        pu, pv = of[u], of[v]
        if pu != pv and pv not in succ[pu]:
            succ[pu].add(pv)
            indeg[pv] += 1
    # Kahn's algorithm, program order among the ready ones
    ready = [(pieces[k][0], k) for k in range(len(pieces)) if indeg[k] == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        _, k = heapq.heappop(ready)
        order.append(k)
        for s in succ[k]:
            indeg[s] -= 1
            if indeg[s] == 0:
                heapq.heappush(ready, (pieces[s][0], s))
    if len(order) != len(pieces):
        raise ValueError("the pieces' graph has a cycle: one of the two partitions is not legal")
    return order


def waterfall(program_or_graph: Program | WSPGraph, a: Sequence[Sequence[int]], b: Sequence[Sequence[int]],
              cost_model: Any = "bohrium", *, budget: Budget = UNLIMITED) -> list[Step]:
    """The steps from partition ``a`` to partition ``b`` (blocks of 0-based instructions,
    both legal): splits down to their common refinement, then merges up (module docstring).
    Empty when they are the same partition."""
    graph = _graph(program_or_graph, budget)
    ev = Evaluator(get_cost_model(cost_model), graph)
    pieces = common_refinement(a, b)
    order = _topological(pieces, graph)
    rank = {k: r for r, k in enumerate(order)}
    mask = [sum(1 << i for i in p) for p in pieces]
    piece_of = {i: k for k, p in enumerate(pieces) for i in p}

    def group(blocks: Sequence[Sequence[int]]) -> list[list[int]]:
        # each block's pieces in topological order
        out = []
        for blk in blocks:
            ks = sorted({piece_of[i] for i in blk}, key=rank.__getitem__)
            out.append(ks)
        return out

    current = {sum(1 << i for i in blk): None for blk in a}   # the partition as masks (ordered set)
    cost = ev.cost_masks(current)
    steps: list[Step] = []

    def step(kind: StepKind, into: int, moved: int, remove: Sequence[int], add: Sequence[int]) -> None:
        nonlocal cost
        budget.check("waterfall")
        for m in remove:
            del current[m]
        for m in add:
            current[m] = None
        after = ev.cost_masks(current)
        steps.append(Step(kind, _bits(into), _bits(moved), cost, after))
        cost = after

    # split: each block of a sheds its pieces, the last (in topological order) first
    for ks in group(a):
        whole = sum(mask[k] for k in ks)
        for k in reversed(ks[1:]):
            rest = whole & ~mask[k]
            step(StepKind.SPLIT, rest, mask[k], (whole,), (rest, mask[k]))
            whole = rest
    # merge: the pieces in topological order, each into the growing part of its block of b
    of_b = {k: j for j, ks in enumerate(group(b)) for k in ks}
    grown: dict[int, int] = {}
    for k in order:
        j = of_b[k]
        if j not in grown:
            grown[j] = mask[k]
            continue
        into = grown[j]
        step(StepKind.MERGE, into, mask[k], (into, mask[k]), (into | mask[k],))
        grown[j] = into | mask[k]
    return steps


def partitions_along(a: Sequence[Sequence[int]], steps: Sequence[Step]) -> list[list[tuple[int, ...]]]:
    """The partitions ``steps`` pass through from ``a``: ``a`` first, then the partition after
    each step (blocks of 0-based instructions, each sorted, in the order of their first
    instruction): what a measured waterfall compiles and times, one partition per step.

    >>> a = [(0, 1, 2), (3,)]
    >>> steps = [Step(StepKind.SPLIT, (0, 1), (2,), 9, 10), Step(StepKind.MERGE, (2,), (3,), 10, 8)]
    >>> partitions_along(a, steps)
    [[(0, 1, 2), (3,)], [(0, 1), (2,), (3,)], [(0, 1), (2, 3)]]
    """
    current = [frozenset(b) for b in a]
    out = [current]
    for st in steps:
        into, moved = frozenset(st.into), frozenset(st.moved)
        if st.kind is StepKind.MERGE:
            current = [b for b in current if b not in (into, moved)] + [into | moved]
        else:
            current = [b for b in current if b != into | moved] + [into, moved]
        out.append(current)
    return [sorted((tuple(sorted(b)) for b in p), key=lambda b: b[0]) for p in out]


def _runs(ins: Iterable[int]) -> list[list[int]]:
    """Sorted 0-based instructions as 1-based inclusive runs: [[1, 3], [7, 7]]."""
    out: list[list[int]] = []
    for i in sorted(ins):
        if out and out[-1][1] == i:
            out[-1][1] = i + 1
        else:
            out.append([i + 1, i + 1])
    return out


def steps_data(steps: Sequence[Step], limit: int = MAX_STEPS) -> dict[str, Any]:
    """The report's JSON of ``steps``, at most ``limit`` listed. Each step names its block by
    its first instruction (``into``, 1-based) and lists what moves as 1-based inclusive runs
    (``moved``), so a view replays the steps from the first partition without the report
    growing with the square of the program: a merge's block is the union of all before it.
    ``cost`` is the partition's cost after the step (before the first: ``cost_before``).

    >>> steps_data([Step(StepKind.MERGE, (0, 1), (2, 3, 5), 10.0, 7.0)])["steps"]
    [{'kind': 'merge', 'into': 1, 'moved': [[3, 4], [6, 6]], 'cost': 7.0}]
    """
    listed = [{"kind": s.kind.value, "into": s.into[0] + 1, "moved": _runs(s.moved), "cost": s.cost_after}
              for s in steps[:limit]]
    return {"steps": listed, "total": len(steps),
            "cost_before": steps[0].cost_before if steps else None,
            "cost_after": steps[-1].cost_after if steps else None}
