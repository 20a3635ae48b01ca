"""Optimal partition by branch and bound (Fig. 11), seeded by unintrusive and greedy.

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
several times). ``docs/semantics.md`` explains why the edge list keeps every optimum.
"""

from __future__ import annotations

import time
from collections import deque
from typing import Any, Callable

from ..costs import Evaluator
from ..wsp import PartitionState, _bits, _find_cycle, reachability
from ._common import ProgramOrState, dense, finish, setup
from .greedy import greedy_merge
from .result import NodeOutcome, PartitionResult, SearchTrace, TraceNode, WeightEdge
from .unintrusive import unintrusive_merge

_EPS = 1e-9


class _Search:
    """The state of one branch-and-bound run over the blocks of a starting partition."""

    def __init__(self, state: PartitionState, ev: Evaluator) -> None:
        self.state, self.ev = state, ev
        ids = sorted(state.members, key=lambda b: state.first[b])
        self.masks = [state.members[b] for b in ids]
        pos = {b: k for k, b in enumerate(ids)}
        self.m = m = len(ids)
        self.domain = [state.domain[b] for b in ids]
        self.opaque = [state.opaque[b] for b in ids]
        self.explicit = [state.explicit[b] for b in ids]
        self.unit_of = {}
        for k, mask in enumerate(self.masks):
            for i in _bits(mask):
                self.unit_of[i] = k
        self.succ = [sorted(pos[x] for x in state.succ[b]) for b in ids]
        reduced = _transitive_reduction(self.succ)
        everyone = dense(ev)
        edges: list[tuple[float, int, int]] = []
        for a in range(m):
            for b in range(a + 1, m):
                if state.forbidden_between(ids[a], ids[b]) is not None:
                    continue
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
            first_dom: dict[tuple[int, ...], int] = {}
            compute = [k for k in members if self.domain[k] is not None]
            for k in compute:
                d = self.domain[k]
                first_dom.setdefault(d, k)
                if len(first_dom) > 1:
                    a, b = list(first_dom.values())[:2]
                    return [(a, b)], "different iteration shapes"
            opq = [k for k in members if self.opaque[k]]
            if opq and len(compute) > 1:
                other = next(k for k in compute if k != opq[0])
                return [(opq[0], other)], "an opaque instruction runs alone"
            mask = sum(self.masks[k] for k in members)
            for k in members:
                hit = self.explicit[k] & mask
                if hit:
                    other = self.unit_of[(hit & -hit).bit_length() - 1]
                    return [(k, other)], "overlapping views that are not identical"
        # a cycle between the merged blocks
        succ: dict[int, set[int]] = {c: set() for c in groups}
        cross: dict[tuple[int, int], tuple[int, int]] = {}
        for a in range(self.m):
            for b in self.succ[a]:
                ca, cb = comp[a], comp[b]
                if ca != cb:
                    succ[ca].add(cb)
                    cross.setdefault((ca, cb), (a, b))
        cycle = _find_cycle(succ)
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
        return [list(_bits(mask)) for mask in groups.values()]


def _transitive_reduction(succ: list[list[int]]) -> set[tuple[int, int]]:
    """Edges ``(a, b)`` of a DAG not implied by a longer path."""
    reach = reachability(succ)
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
) -> PartitionResult:
    """An optimal legal partition, or the best found within the budget.

    Parameters
    ----------
    program_or_state
        The program, its WSP graph, or a partition state to start from.
    cost_model
        A model name or object.
    max_nodes, time_limit
        The budget: search-tree nodes and seconds. Out of budget (or on ``KeyboardInterrupt``
        or when ``should_stop()`` is true) the best partition so far is returned with
        ``proven_optimal=False``.
    trace_limit
        How many nodes the trace records (all are counted).
    seed_greedy
        Start with greedy's partition as the best so far (prunes more). ``False`` starts
        from the unintrusive partition only, as the paper's Fig. 11 does: the trace then
        shows the search improving on its own (Fig. 10's "new best" nodes).

    Examples
    --------
    >>> from fusionlab.examples import fig3
    >>> r = optimal(fig3(), "bohrium")
    >>> r.cost_elements, r.proven_optimal, r.legal
    (38, True, True)
    >>> r.trace.explored > 0
    True
    >>> paper = optimal(fig3(), "bohrium", seed_greedy=False)
    >>> paper.cost_elements, sum(n.outcome is NodeOutcome.NEW_BEST for n in paper.trace.nodes) > 0
    (38, True)
    """
    ctx = setup(program_or_state, cost_model)
    ev, state = ctx.evaluator, ctx.state
    notes = []
    if ev.pairwise and ev.additive:
        unintrusive_merge(state, ev)
    else:
        notes.append("unintrusive preconditioning skipped: the model is not additive and pairwise")
    search = _Search(state, ev)
    start_blocks = tuple(tuple(_bits(mk)) for mk in search.masks)
    seeds: list[tuple[str, float]] = []
    best_blocks = [list(b) for b in start_blocks]
    best_cost = ev.cost_masks(search.masks)
    seeds.append(("unintrusive", best_cost))
    if seed_greedy:
        seeded = state.copy()
        greedy_merge(seeded, ev)
        g_cost = ev.cost(seeded.blocks())
        seeds.append(("greedy", g_cost))
        if g_cost < best_cost - _EPS:
            best_blocks, best_cost = [list(b) for b in seeded.blocks()], g_cost

    nodes: list[TraceNode] = []
    explored = 0
    stopped = ""
    deadline = time.perf_counter() + time_limit
    stack: list[tuple[frozenset[int], frozenset[int], int | None, int]] = [(frozenset(), frozenset(), None, 0)]

    def record(node: TraceNode) -> None:
        if len(nodes) < trace_limit:
            nodes.append(node)

    try:
        while stack:
            if explored >= max_nodes:
                stopped = f"node budget of {max_nodes} reached"
                break
            if time.perf_counter() > deadline:
                stopped = f"time budget of {time_limit:g} s reached"
                break
            if should_stop is not None and should_stop():
                stopped = "stopped by the caller"
                break
            cut, kept, parent, depth = stack.pop()
            nid = explored
            explored += 1
            comp = search.components(cut)
            cost = search.cost(comp)
            common = dict(id=nid, parent=parent, depth=depth, cut=tuple(sorted(cut)), kept=tuple(sorted(kept)), cost=cost)
            if cost >= best_cost - _EPS:
                record(TraceNode(**common, legal=False, outcome=NodeOutcome.PRUNED))
                continue
            found = search.violation(comp)
            if found is None:
                best_cost, best_blocks = cost, search.blocks_of(comp)
                record(TraceNode(**common, legal=True, outcome=NodeOutcome.NEW_BEST))
                continue
            pairs, why = found
            branch: list[int] = []
            for a, b in pairs:
                for e in search.path(a, b, cut):
                    if e not in kept and e not in branch:
                        branch.append(e)
            # cut the cheapest edge first: good partitions come early and tighten the bound
            branch.sort(key=lambda e: search.savings[e])
            if not branch:
                record(TraceNode(**common, legal=False, outcome=NodeOutcome.INFEASIBLE, violation=why))
                continue
            record(TraceNode(**common, legal=False, outcome=NodeOutcome.BRANCHED, violation=why))
            children = [(cut | {e}, kept | frozenset(branch[:k]), nid, depth + 1) for k, e in enumerate(branch)]
            stack.extend(reversed(children))
    except KeyboardInterrupt:
        stopped = "interrupted"
    if stopped:
        notes.append(f"not proven optimal: {stopped} after {explored} nodes")
    trace = SearchTrace(
        start_blocks=start_blocks,
        edges=tuple(
            WeightEdge(start_blocks[a], start_blocks[b], s) for (a, b), s in zip(search.edges, search.savings)
        ),
        nodes=tuple(nodes),
        seed_costs=tuple(seeds),
        explored=explored,
        recorded=len(nodes),
        stopped=stopped,
    )
    return finish(ctx, "optimal", best_blocks, proven_optimal=not stopped, trace=trace, notes=notes)
