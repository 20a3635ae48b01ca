"""Greedy merge (Fig. 7): repeatedly merge over the heaviest legal weight edge.

Weight edges join blocks whose merge saves (Def. 15). They live in a heap; an edge whose
merge is illegal is dropped (Fig. 7, line 7), and a merge pushes fresh edges for the new
block, so an edge dropped for a cycle comes back once the blocks on the path have merged.
Ties go to the edge whose blocks start earliest in the program.

For the built-in models but Robinson's (``sparse_savings``, no merge bonus) the edges are
found and kept up to date incrementally (:class:`_SparseGreedy`): a merge can only save
between blocks that share a view, or where one creates or frees a base the other
accesses (:class:`~fusionlab.partition._common.SavingIndex`), and merging ``x`` into ``b``
changes the saving of ``b`` with ``y`` only when ``x`` and ``y`` are so related. So after a
merge only the smaller block's partners are priced again; other edges stay in the heap
and are re-checked when they come out (a heap with lazy invalidation). The edges that save
nothing (``zero_edges``) are those between related blocks and between blocks joined by a
dependency. tests/test_scaling.py checks that this gives the partition of the plain loop
(every edge of the new block priced after each merge).

Robinson's model (a merge bonus: every pair of blocks saves at least 1, so every pair is a
weight edge) prices only the related pairs too (:class:`_BonusGreedy`): an unrelated pair
saves exactly the bonus, so once no related pair saves more, the next edge is the first
compatible pair in program order, found by a scan instead of a heap of all pairs.

Both price a pair only when it may merge now: a pair joined by a path through another
block (a cycle if merged) stays so while only other blocks merge, since a contraction
shortens the path but keeps a block that is neither end on it (tests/test_scaling.py), so
it is kept aside unpriced and pushed again when one of its blocks changes. The legality
test itself answers from the transitive closure the state keeps through merges
(:meth:`~fusionlab.analysis.wsp.PartitionState.reach_masks`): a stencil whose iterations all read
the same views has thousands of such far-apart related pairs.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left
from typing import Any

from fusionlab.support.budget import UNLIMITED, Budget, BudgetExceeded
from fusionlab.costs import Evaluator
from fusionlab.analysis.wsp import PartitionState
from fusionlab.partition._common import (
    BaseIndex, ProgramOrState, SavingIndex, announce, cut_note, dense, finish, setup, sparse,
)
from fusionlab.partition.result import PartitionResult

_EPS = 1e-9


def greedy_merge(
    state: PartitionState, ev: Evaluator, gas: int | None = None, zero_edges: bool = True,
    budget: Budget | None = None, merges: list[tuple[int, int]] | None = None, phase: str = "greedy",
) -> list[tuple[int, int]]:
    """Run the greedy loop on ``state`` in place; returns the merges made (block id pairs).

    With ``zero_edges`` the weight edges include the merges that save nothing between blocks
    sharing an array or a dependency (taken last, after every saving merge), as Def. 15's
    complete weight graph and Bohrium's greedy fuser do: they cost nothing and leave fewer
    kernels.

    ``gas`` bounds the heap operations (default: generous, quadratic in the block count);
    running out raises ``RuntimeError`` rather than looping for ever.

    ``budget`` is checked for each block whose weight edges are computed (phase
    ``"<phase>: weight edges"``) and each edge taken from the heap (``"<phase>: merging"``);
    when it runs out :class:`~fusionlab.support.budget.BudgetExceeded` propagates and ``state``
    holds the (legal) merges made so far, also appended to ``merges`` when given.
    """
    budget = UNLIMITED if budget is None else budget
    merges = [] if merges is None else merges
    if sparse(ev) and not dense(ev):
        return _SparseGreedy(state, ev, zero_edges, budget, merges, phase).run(gas)
    if sparse(ev) and ev.pairwise and ev.merge_bonus > _EPS:
        return _BonusGreedy(state, ev, budget, merges, phase).run(gas)
    index = BaseIndex(state)
    everyone = dense(ev)
    heap: list[tuple[float, int, int, int, int]] = []
    merges = [] if merges is None else merges
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

    announce(budget, f"{phase}: weight edges")
    for b in sorted(state.members):
        budget.check(f"{phase}: weight edges")
        for x in candidates(b):
            if x > b:
                push(b, x)
    announce(budget, f"{phase}: merging")
    while heap:
        budget.check(f"{phase}: merging")
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


class _SparseGreedy:
    """The greedy loop with incremental weight edges (see the module's docstring).

    A heap entry is ``(-saving, first, first, b, y, version of b, version of y)``; a block
    keeps its id when it absorbs a smaller one (its version goes up). An entry whose blocks
    are unchanged is current; any other is re-priced when it comes out and used only if its
    key is still the pair's key (else a fresher entry for the pair is in the heap).
    """

    def __init__(self, state: PartitionState, ev: Evaluator, zero_edges: bool, budget: Budget,
                 merges: list[tuple[int, int]], phase: str) -> None:
        self.state, self.ev, self.zero_edges = state, ev, zero_edges
        self.budget, self.merges, self.phase = budget, merges, phase
        self.index = SavingIndex(state)
        self.heap: list[tuple[float, int, int, int, int, int, int]] = []
        self.version: dict[int, int] = {b: 0 for b in state.members}
        self.dropped: dict[int, set[int]] = {b: set() for b in state.members}

    def key(self, b: int, y: int) -> tuple[float, int, int] | None:
        """The heap key of merging blocks ``b`` and ``y``, ``None`` when it is no edge."""
        state = self.state
        s = self.ev.saving(state.members[b], state.members[y])
        if s > _EPS or (self.zero_edges and s > -_EPS):
            f1, f2 = sorted((state.first[b], state.first[y]))
            return -max(s, 0.0), f1, f2
        return None

    def push(self, b: int, y: int) -> None:
        if not self.state.compatible(b, y):
            return  # a forbidden pair can never merge
        if not self.state.can_merge(b, y):
            # a cycle stays until one of the two blocks changes (merging others only
            # contracts the path), and then the pair is pushed again: no need to price it
            self.dropped[b].add(y)
            self.dropped[y].add(b)
            return
        k = self.key(b, y)
        if k is not None:
            heapq.heappush(self.heap, (*k, b, y, self.version[b], self.version[y]))

    def run(self, gas: int | None) -> list[tuple[int, int]]:
        state, index, budget = self.state, self.index, self.budget
        n = len(state.members)
        gas = gas if gas is not None else 50 * (n + 1) ** 2 + 10_000
        announce(budget, f"{self.phase}: weight edges")
        for b in sorted(state.members):
            budget.check(f"{self.phase}: weight edges")
            for y in index.partners(b):
                if y > b:
                    self.push(b, y)
        announce(budget, f"{self.phase}: merging")
        heap = self.heap
        while heap:
            budget.check(f"{self.phase}: merging")
            gas -= 1
            if gas < 0:
                raise RuntimeError("greedy ran out of gas; this is a bug, please report it")
            neg, f1, f2, b, y, vb, vy = heapq.heappop(heap)
            B, Y = index.find(b), index.find(y)
            if B == Y:
                continue
            if (B, Y, vb, vy) != (b, y, self.version[B], self.version[Y]):
                if self.key(B, Y) != (neg, f1, f2):
                    continue  # stale: a current entry for the pair is in the heap
            if not state.can_merge(B, Y):
                self.dropped[B].add(Y)
                self.dropped[Y].add(B)
                continue
            self.merge(B, Y)
        return self.merges

    def merge(self, b: int, y: int) -> None:
        """Merge, then price again the edges the merge can have changed."""
        state, index = self.state, self.index
        # the smaller block's partners are priced again; the larger's only when the merged
        # block starts earlier than it did (their keys change)
        big, small = (b, y) if state.members[b].bit_count() >= state.members[y].bit_count() else (y, b)
        again = index.partners(small)
        if state.first[small] < state.first[big]:
            again |= index.partners(big)
        again |= self.dropped.pop(b) | self.dropped.pop(y)
        self.ev.merged(state.members[big], state.members[small], consume=True)
        z = state.merge(b, y, reuse=True)
        assert z == big
        index.merged(b, y, z)
        self.merges.append((b, y))
        self.version[z] += 1
        self.dropped[z] = set()
        for x in {index.find(x) for x in again} - {z}:
            self.push(z, x)


class _BonusGreedy:
    """The greedy loop for a sparse model with a merge bonus (Robinson's: one block fewer
    saves 1), without pricing every pair.

    Every pair of blocks is a weight edge, but an unrelated pair (no shared view, no base
    one creates or frees and the other accesses; ``sparse_savings``) saves exactly the
    bonus. So the related pairs are priced in a heap as in the plain loop, and when none
    left saves more than the bonus, the next edge is the first compatible pair in program
    order (by the blocks' first instructions, the plain loop's tie rule) that was not
    found illegal since its blocks last changed: a scan over the blocks, not a heap of
    every pair. The merges are the plain loop's (tests/test_scaling.py).
    """

    def __init__(self, state: PartitionState, ev: Evaluator, budget: Budget,
                 merges: list[tuple[int, int]], phase: str) -> None:
        self.state, self.ev, self.budget, self.merges, self.phase = state, ev, budget, merges, phase
        self.index = SavingIndex(state)
        self.heap: list[tuple[float, int, int, int, int]] = []
        self.dropped: dict[int, set[int]] = {b: set() for b in state.members}
        # live blocks in program order of their first instruction (the scan's order)
        self.order = sorted(state.members, key=state.first.__getitem__)
        self.firsts = [state.first[b] for b in self.order]
        self.cursor = (0, 0)  # where the scan for the next pair resumes (row, column of order)

    def push(self, b: int, x: int) -> None:
        state = self.state
        if not state.compatible(b, x):
            return  # a forbidden pair can never merge
        if not state.can_merge(b, x):
            # illegal until one of the blocks changes, and then it is pushed again (a new id)
            self.dropped[b].add(x)
            self.dropped[x].add(b)
            return
        s = self.ev.saving(state.members[b], state.members[x])
        if s > self.ev.merge_bonus + _EPS:  # the heap serves only edges above the bonus
            f1, f2 = sorted((state.first[b], state.first[x]))
            heapq.heappush(self.heap, (-s, f1, f2, b, x))

    def run(self, gas: int | None) -> list[tuple[int, int]]:
        state, budget = self.state, self.budget
        n = len(state.members)
        gas = gas if gas is not None else 50 * (n + 1) ** 2 + 10_000
        announce(budget, f"{self.phase}: weight edges")
        for b in sorted(state.members):
            budget.check(f"{self.phase}: weight edges")
            for x in self.index.partners(b):
                if x > b:
                    self.push(b, x)
        announce(budget, f"{self.phase}: merging")
        bonus = self.ev.merge_bonus
        heap = self.heap
        while True:
            budget.check(f"{self.phase}: merging")
            gas -= 1
            if gas < 0:
                raise RuntimeError("greedy ran out of gas; this is a bug, please report it")
            while heap and (heap[0][3] not in state.members or heap[0][4] not in state.members):
                heapq.heappop(heap)  # a stale edge of a block that has since merged
            if heap and -heap[0][0] > bonus + _EPS:
                _, _, _, b, x = heapq.heappop(heap)
            else:
                got = self._first_pair()
                if got is None:
                    return self.merges
                b, x = got
            if not state.can_merge(b, x):
                self.dropped[b].add(x)
                self.dropped[x].add(b)
                continue
            self.merge(b, x)

    def _first_pair(self) -> tuple[int, int] | None:
        """The compatible pair first in program order not found illegal since its blocks
        last changed (every such pair saves the bonus now), or ``None``."""
        state, order = self.state, self.order
        # pairs before the cursor were rejected since the last merge, and stay rejected
        row, col = self.cursor
        for k in range(row, len(order)):
            b = order[k]
            j = state.first_compatible(b, order, max(col, k + 1), self.dropped[b])
            if j is not None:
                self.cursor = (k, j)
                return b, order[j]
            col = 0
        self.cursor = (len(order), 0)
        return None

    def merge(self, b: int, x: int) -> None:
        """Merge (a new block id, as the plain loop), then price the new block's related pairs."""
        state = self.state
        for y in (b, x):  # out of the scan's order
            k = bisect_left(self.firsts, state.first[y])
            del self.order[k], self.firsts[k]
        self.ev.merged(state.members[b], state.members[x])
        z = state.merge(b, x)
        self.index.merged(b, x, z)
        self.merges.append((b, x))
        k = bisect_left(self.firsts, state.first[z])
        self.order.insert(k, z)
        self.firsts.insert(k, state.first[z])
        self.dropped.pop(b)
        self.dropped.pop(x)
        self.dropped[z] = set()
        self.cursor = (0, 0)  # the blocks changed: the scan starts again
        for y in self.index.partners(z):
            self.push(z, y)


def greedy(
    program_or_state: ProgramOrState, cost_model: Any = "bohrium", *, zero_edges: bool = True,
    budget: Budget | None = None,
) -> PartitionResult:
    """Partition by greedy merging over the heaviest weight edge.

    ``zero_edges=False`` stops when no merge saves (the sparse reading of Fig. 4). Cut by
    ``budget``, it returns the merges made so far (each one legal).

    Examples
    --------
    >>> from fusionlab.ir.examples import fig3
    >>> r = greedy(fig3(), "bohrium")
    >>> r.legal, r.cost_elements
    (True, 38)
    """
    ctx = setup(program_or_state, cost_model, budget)
    merges: list[tuple[int, int]] = []
    notes, cut = [], ""
    try:
        greedy_merge(ctx.state, ctx.evaluator, zero_edges=zero_edges, budget=ctx.budget, merges=merges)
    except BudgetExceeded as exc:
        notes.append(cut_note(exc, f"{len(merges)} greedy merges made before it"))
        cut = exc.phase
    return finish(ctx, "greedy", ctx.state.blocks(), notes=notes, budget_cut=cut)
