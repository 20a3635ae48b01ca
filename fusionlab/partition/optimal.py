"""Optimal partition by branch and bound (Fig. 11), seeded by linear, unintrusive and greedy.

The search starts from the unintrusive partition ``U`` and a list of weight edges between
its blocks. A node of the search tree is a set of *cut* edges (plus edges decided to stay);
its partition merges the blocks along every edge not cut (MergeByMask). By monotonicity
(Def. 6) that partition's cost bounds every node below it, so a node is pruned when its
cost is no better than the best legal partition found so far, and a legal node needs no
children: it is the best of its subtree.

An illegal node branches on one violation — a fuse-preventing pair inside a block, or a
cycle between blocks — and only on the undecided edges of a path that joins the two
instructions that must be separated: child ``k`` cuts edge ``k`` and keeps edges
``1..k-1``. The children split the remaining partitions disjointly, so every partition is
visited at most once (the paper's Fig. 11 enumerates masks, which visits many partitions
several times). ``docs/algorithms.md`` explains why the edge list keeps every optimum.
"""

from __future__ import annotations

from collections import deque
from typing import Any, Callable

from fusionlab.support.budget import UNLIMITED, Budget, BudgetExceeded
from fusionlab.costs import Evaluator
from fusionlab.analysis.legality import first_conflict
from fusionlab.analysis.wsp import PartitionState, bit_indices, find_cycle, reachability
from fusionlab.partition._common import (
    BaseIndex, ProgramOrState, SavingIndex, announce, coarsest_bound, cut_note, dense, finish,
    setup, sparse,
)
from fusionlab.partition.greedy import greedy_merge
from fusionlab.partition.linear import LinearCut, linear_merge
from fusionlab.partition.result import NodeOutcome, PartitionResult, SearchTrace, TraceNode, WeightEdge
from fusionlab.partition.separation import separated_blocks
from fusionlab.partition.unintrusive import unintrusive_merge

_EPS = 1e-9
# Above this many starting blocks the separated pairs are not derived (bit masks of this
# many bits per block; the search would not finish on such a program anyway).
SEPARATION_LIMIT = 2000


class _Search:
    """The state of one branch-and-bound run over the blocks of a starting partition."""

    def __init__(self, state: PartitionState, ev: Evaluator, budget: Budget = UNLIMITED) -> None:
        """Set up the weight edges between the blocks of ``state``.

        For a model where unrelated blocks save nothing (not dense), only pairs that share
        a base or a dependency are priced (the others save nothing and are not joined in
        the transitive reduction), so the set-up grows with the program's sharing, not with
        the square of its blocks. ``budget`` is checked once per block.
        """
        self.state, self.ev = state, ev
        announce(budget, "optimal: weight edges")
        ids = sorted(state.members, key=lambda b: state.first[b])
        self.masks = [state.members[b] for b in ids]
        pos = {b: k for k, b in enumerate(ids)}
        self.m = m = len(ids)
        self.graph = state.graph
        self.parts = [state.summary(b) for b in ids]
        self.succ = [sorted(pos[x] for x in state.succ[b]) for b in ids]
        reduced = _transitive_reduction(self.succ, budget)
        everyone = dense(ev)
        # a saving needs a shared view (or a created or freed base) under a sparse model,
        # a shared base under any pairwise one; joined blocks are neighbours
        index: Any = None if everyone else SavingIndex(state) if sparse(ev) else BaseIndex(state)
        apart = (separated_blocks(state, ids, self.succ, budget, "optimal: weight edges") if m <= SEPARATION_LIMIT
                 else None)
        edges: list[tuple[float, int, int]] = []
        for a in range(m):
            budget.check("optimal: weight edges")
            if index is None:
                later: Any = range(a + 1, m)
            else:
                near = index.partners(ids[a]) | state.neighbours(ids[a])
                later = sorted(k for k in (pos[x] for x in near) if k > a)
            for b in later:
                if not state.compatible(ids[a], ids[b]):
                    continue
                if apart is not None and apart[a] >> b & 1:
                    continue  # no legal partition puts them together: an optimum never merges them
                s = ev.saving(self.masks[a], self.masks[b], self._others(a, b))
                joined = (a, b) in reduced or (b, a) in reduced
                if everyone or s > _EPS or joined:
                    edges.append((s, a, b))
        edges.sort(key=lambda e: (-e[0], e[1], e[2]))
        self.edges = [(a, b) for _, a, b in edges]
        self.savings = [s for s, _, _ in edges]
        self.adj: list[list[tuple[int, int]]] = [[] for _ in range(m)]
        for e, (a, b) in enumerate(self.edges):
            self.adj[a].append((b, e))
            self.adj[b].append((a, e))

    def _others(self, a: int, b: int) -> list[int]:
        return [] if self.ev.additive else [x for k, x in enumerate(self.masks) if k not in (a, b)]

    # -- one node -----------------------------------------------------------------------
    def components(self, cut: frozenset[int]) -> list[int]:
        """Component label of each starting block when the edges not in ``cut`` merge."""
        parent = list(range(self.m))

        def find(x: int) -> int:
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        for e, (a, b) in enumerate(self.edges):
            if e not in cut:
                ra, rb = find(a), find(b)
                if ra != rb:
                    parent[max(ra, rb)] = min(ra, rb)
        return [find(x) for x in range(self.m)]

    def cost(self, comp: list[int]) -> float:
        groups: dict[int, list[int]] = {}
        for k, c in enumerate(comp):
            groups.setdefault(c, []).append(self.masks[k])
        if self.ev.additive:
            return sum(self.ev.union_cost(parts) for parts in groups.values())
        return self.ev.cost_masks([sum(parts) for parts in groups.values()])

    def violation(self, comp: list[int]) -> tuple[list[tuple[int, int]], str] | None:
        """Pairs of starting blocks that must be separated to fix one violation, and why."""
        groups: dict[int, list[int]] = {}
        for k, c in enumerate(comp):
            groups.setdefault(c, []).append(k)
        for members in groups.values():
            if len(members) < 2:
                continue
            got = first_conflict(self.graph, [self.parts[k] for k in members])
            if got is not None:
                j, k, reason, detail = got
                return [(members[j], members[k])], f"{reason.value}: {detail}"
        # a cycle between the merged blocks
        succ: dict[int, set[int]] = {c: set() for c in groups}
        cross: dict[tuple[int, int], tuple[int, int]] = {}
        for a in range(self.m):
            for b in self.succ[a]:
                ca, cb = comp[a], comp[b]
                if ca != cb:
                    succ[ca].add(cb)
                    cross.setdefault((ca, cb), (a, b))
        cycle = find_cycle(succ)
        if cycle is None:
            return None
        pairs = []
        for j in range(len(cycle) - 1):
            prev = cycle[j - 1] if j else cycle[-2]
            entry = cross[(prev, cycle[j])][1]
            exit_ = cross[(cycle[j], cycle[j + 1])][0]
            if entry != exit_:
                pairs.append((entry, exit_))
        return pairs, "a cycle between blocks"

    def path(self, a: int, b: int, cut: frozenset[int]) -> list[int]:
        """Edge indices of a shortest path from ``a`` to ``b`` over edges not cut."""
        back: dict[int, tuple[int, int]] = {a: (-1, -1)}
        queue = deque([a])
        while queue:
            x = queue.popleft()
            if x == b:
                break
            for y, e in self.adj[x]:
                if e not in cut and y not in back:
                    back[y] = (x, e)
                    queue.append(y)
        out = []
        x = b
        while x != a:
            x, e = back[x]
            out.append(e)
        return out[::-1]

    def blocks_of(self, comp: list[int]) -> list[list[int]]:
        groups: dict[int, int] = {}
        for k, c in enumerate(comp):
            groups[c] = groups.get(c, 0) | self.masks[k]
        return [list(bit_indices(mask)) for mask in groups.values()]


def _transitive_reduction(succ: list[list[int]], budget: Budget = UNLIMITED) -> set[tuple[int, int]]:
    """Edges ``(a, b)`` of a DAG not implied by a longer path."""
    reach = reachability(succ, budget, "optimal: weight edges")
    out = set()
    for x, targets in enumerate(succ):
        longer = 0
        for y in targets:
            longer |= reach[y]
        out.update((x, y) for y in targets if not longer >> y & 1)
    return out


def optimal(
    program_or_state: ProgramOrState,
    cost_model: Any = "bohrium",
    *,
    max_nodes: int = 1_000_000,
    time_limit: float = 30.0,
    trace_limit: int = 20_000,
    should_stop: Callable[[], bool] | None = None,
    seed_greedy: bool = True,
    budget: Budget | None = None,
) -> PartitionResult:
    """An optimal legal partition, or the best found within the budget.

    Parameters
    ----------
    program_or_state
        The program, its WSP graph, or a partition state to start from.
    cost_model
        A model name or object.
    max_nodes, time_limit
        The search's own limits: search-tree nodes and seconds. The seconds count from the
        end of building the WSP graph (a prerequisite every algorithm shares, bounded by
        ``budget`` alone, so a short ``time_limit`` still returns a partition) and never
        reach past ``budget``.
    trace_limit
        How many nodes the trace records (all are counted).
    should_stop
        Asked between nodes; ``True`` stops the search.
    seed_greedy
        Start with greedy's partition as the best so far (prunes more). ``False`` starts
        from the unintrusive partition only, as the paper's Fig. 11 does: the trace then
        shows the search improving on its own (Fig. 10's "new best" nodes).
    budget
        The caller's :class:`~fusionlab.support.budget.Budget`. Every phase checks it (the
        unintrusive merges, the weight edges, the greedy seed, each search node); when it
        or ``time_limit`` runs out, or ``max_nodes`` is reached, the best legal partition so
        far is returned with ``proven_optimal=False``, a note naming the phase and, once the
        search has started, ``bound``: a proven lower bound on the optimum (the cheapest
        bound among the nodes left open). ``KeyboardInterrupt`` is not caught.

    Examples
    --------
    >>> from fusionlab.ir.examples import fig3
    >>> r = optimal(fig3(), "bohrium")
    >>> r.cost_elements, r.proven_optimal, r.legal
    (38, True, True)
    >>> r.trace.explored > 0
    True
    >>> paper = optimal(fig3(), "bohrium", seed_greedy=False)
    >>> paper.cost_elements, sum(n.outcome is NodeOutcome.NEW_BEST for n in paper.trace.nodes) > 0
    (38, True)
    >>> cut = optimal(fig3(), "bohrium", max_nodes=3, seed_greedy=False)
    >>> cut.proven_optimal, cut.bound <= 304 <= cut.cost
    (False, True)
    """
    ctx = setup(program_or_state, cost_model, budget)
    own = (UNLIMITED if budget is None else budget).child(time_limit)
    ctx.budget = own
    run = _Run(ctx, own, max_nodes, trace_limit, should_stop)
    try:
        run.prepare(seed_greedy)
        run.search()
    except BudgetExceeded as exc:
        run.stopped = run.stopped or "time budget"
        run.cut = exc
    return run.result()


class _Run:
    """One call of :func:`optimal`: its phases, and the best partition known at any time."""

    def __init__(self, ctx: Any, budget: Budget, max_nodes: int, trace_limit: int,
                 should_stop: Callable[[], bool] | None) -> None:
        self.ctx, self.budget = ctx, budget
        self.max_nodes, self.trace_limit, self.should_stop = max_nodes, trace_limit, should_stop
        self.notes: list[str] = []
        self.search_: _Search | None = None
        self.start_blocks: tuple[tuple[int, ...], ...] = ()
        self.seeds: list[tuple[str, float]] = []
        self.best_blocks: list[list[int]] | None = None
        self.best_cost = float("inf")
        self.nodes: list[TraceNode] = []
        self.explored = 0
        self.stopped = ""
        self.cut: BudgetExceeded | None = None
        self.caller_stopped = False
        self.bound: float | None = None

    def offer(self, blocks: list[list[int]] | list[tuple[int, ...]], cost: float) -> None:
        """A legal partition: the best so far when it is cheaper."""
        if self.best_blocks is None or cost < self.best_cost - _EPS:
            self.best_blocks, self.best_cost = [list(b) for b in blocks], cost

    def prepare(self, seed_greedy: bool) -> None:
        """Unintrusive merges, the weight edges and the greedy seed (each checks the budget)."""
        ctx, ev, state = self.ctx, self.ctx.evaluator, self.ctx.state
        if seed_greedy:
            # linear from the program's own blocks: greedy can be a third worse (a map of
            # the next time step merged into this one's block, its output then written),
            # and a better first bound prunes more of the search
            lined = state.copy()
            try:
                linear_merge(lined, self.budget, phase="optimal: linear seed")
            except LinearCut:
                pass   # the merges made so far are legal
            l_cost = ev.cost(lined.blocks())
            self.seeds.append(("linear", l_cost))
            self.offer(lined.blocks(), l_cost)
        if ev.pairwise and ev.additive:
            try:
                unintrusive_merge(state, ev, budget=self.budget, phase="optimal: unintrusive")
            finally:  # the merges made so far are legal: a starting point to return
                self.offer(state.blocks(), ev.cost(state.blocks()))
        else:
            self.notes.append("unintrusive preconditioning skipped: the model is not additive and pairwise")
            self.offer(state.blocks(), ev.cost(state.blocks()))
        self.search_ = _Search(state, ev, self.budget)
        self.start_blocks = tuple(tuple(bit_indices(mk)) for mk in self.search_.masks)
        self.seeds.append(("unintrusive", ev.cost_masks(self.search_.masks)))
        if seed_greedy:
            seeded = state.copy()
            try:
                greedy_merge(seeded, ev, budget=self.budget, phase="optimal: greedy seed")
            finally:  # a cut greedy run is still legal, and may already beat the start
                g_cost = ev.cost(seeded.blocks())
                self.seeds.append(("greedy", g_cost))
                self.offer(seeded.blocks(), g_cost)

    def search(self) -> None:
        """Branch and bound from the starting partition (Fig. 11)."""
        search, budget = self.search_, self.budget
        assert search is not None
        # (cut, kept, parent id, depth, parent's cost: a lower bound for the node)
        stack: list[tuple[frozenset[int], frozenset[int], int | None, int, float | None]] = [
            (frozenset(), frozenset(), None, 0, None)]
        self.stack = stack
        announce(budget, "optimal: search")
        while stack:
            if self.explored >= self.max_nodes:
                self.stopped = f"node budget of {self.max_nodes} reached"
                return
            budget.check("optimal: search")
            if self.should_stop is not None and self.should_stop():
                self.stopped = "stopped by the caller"
                self.caller_stopped = True
                return
            self.node(*stack.pop())

    def node(self, cut: frozenset[int], kept: frozenset[int], parent: int | None, depth: int,
             _bound: float | None) -> None:
        search = self.search_
        assert search is not None
        nid = self.explored
        self.explored += 1
        comp = search.components(cut)
        cost = search.cost(comp)
        if parent is None:
            self.root_cost = cost
        common = dict(id=nid, parent=parent, depth=depth, cut=tuple(sorted(cut)), kept=tuple(sorted(kept)),
                      cost=cost)
        if cost >= self.best_cost - _EPS:
            self.record(TraceNode(**common, legal=False, outcome=NodeOutcome.PRUNED))
            return
        found = search.violation(comp)
        if found is None:
            self.best_cost, self.best_blocks = cost, search.blocks_of(comp)
            self.record(TraceNode(**common, legal=True, outcome=NodeOutcome.NEW_BEST))
            return
        pairs, why = found
        branch: list[int] = []
        for a, b in pairs:
            for e in search.path(a, b, cut):
                if e not in kept and e not in branch:
                    branch.append(e)
        # cut the cheapest edge first: good partitions come early and tighten the bound
        branch.sort(key=lambda e: search.savings[e])
        if not branch:
            self.record(TraceNode(**common, legal=False, outcome=NodeOutcome.INFEASIBLE, violation=why))
            return
        self.record(TraceNode(**common, legal=False, outcome=NodeOutcome.BRANCHED, violation=why))
        children = [(cut | {e}, kept | frozenset(branch[:k]), nid, depth + 1, cost) for k, e in enumerate(branch)]
        self.stack.extend(reversed(children))

    def record(self, node: TraceNode) -> None:
        if len(self.nodes) < self.trace_limit:
            self.nodes.append(node)

    def lower_bound(self) -> float | None:
        """The cheapest legal partition costs at least this (``None`` before the search).

        Every partition below an open node costs at least its parent's cost (Def. 6), and
        every other one was priced, pruned, or is the best so far."""
        stack = getattr(self, "stack", None)
        if stack is None:
            return None
        bounds = [b for *_, b in stack if b is not None]
        if len(bounds) < len(stack):  # the root is still open: no bound known
            return None
        return min([self.best_cost] + bounds)

    def result(self) -> PartitionResult:
        ctx, notes = self.ctx, list(self.notes)
        proven = not self.stopped
        cut_phase = ""
        if self.cut is not None:
            cut_phase = self.cut.phase
            what = "best legal partition so far" if self.search_ is not None else "the unintrusive merges made so far"
            notes.append("not proven optimal: " + cut_note(self.cut, f"{what}, after {self.explored} search nodes"))
        elif self.stopped:
            notes.append(f"not proven optimal: {self.stopped} after {self.explored} nodes")
            if self.caller_stopped:
                cut_phase = "optimal: search"
        bound = None
        if not proven:
            # before the search has a bound of its own, all instructions in one block give one
            found = self.lower_bound()
            bound = max(found if found is not None else -float("inf"), coarsest_bound(ctx))
        trace = None
        if self.search_ is not None:
            search = self.search_
            trace = SearchTrace(
                start_blocks=self.start_blocks,
                edges=tuple(WeightEdge(self.start_blocks[a], self.start_blocks[b], s)
                            for (a, b), s in zip(search.edges, search.savings)),
                nodes=tuple(self.nodes),
                seed_costs=tuple(self.seeds),
                explored=self.explored,
                recorded=len(self.nodes),
                stopped=self.stopped,
            )
        assert self.best_blocks is not None
        return finish(ctx, "optimal", self.best_blocks, proven_optimal=proven, trace=trace, notes=notes,
                      bound=bound, budget_cut=cut_phase)
