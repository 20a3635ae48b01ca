"""An exact portfolio: independent parts, each by branch and bound, a split by iteration
shape, then the ILP.

1. **Independent parts.** Instructions that share no base (hence no dependency, and no view
   to read once or base to contract) form parts solved one by one and joined. This is exact
   when merging blocks of different parts saves nothing — a model whose savings are
   pairwise with no per-block bonus (Bohrium, Max Contract, Max Locality; not Robinson's,
   whose every merge saves a block) — and when each part's WSP graph is the whole graph's
   restricted to it (its rules are per base, and this is checked). Then every legal
   partition's restriction to a part is legal there and costs add up, so the sum of the
   parts' optima is a lower bound and their join, legal and of that cost, is an optimum
   (``docs/algorithms.md``, "Algorithms").
2. **Branch and bound first** (:func:`~fusionlab.partition.optimal.optimal`, seeded by
   linear, unintrusive and greedy) for a quarter of a second at most: most captured batches
   are proven in milliseconds, and its search trace is kept for the search-tree view. From
   64 instructions a solver process is started beside it (its SciPy import takes about a
   second on a busy machine).
3. **Then the ILP** (:func:`~fusionlab.partition.ilp.ilp`, built-in models, tightened) from
   the branch and bound's best, with half the time left when step 4 applies, else all.
4. **Split by iteration shape** (:mod:`.classes`, Bohrium model) with the time left: each
   shape's instructions solved apart by steps 2 and 3; the sum of their optima bounds the
   optimum, and their join, when legal and of that cost, is one.

The answer is the cheapest legal partition found, proven when it meets the best proven
lower bound too (:func:`meets`); ``bound`` is the best proven lower bound
(the largest of the steps' bounds, and never below the cost of all instructions in one
block, which bounds every partition of a monotone model). ``notes`` name the method that
proved the optimum, or the gap.
"""

from __future__ import annotations

import math
from typing import Any

from fusionlab.support.budget import UNLIMITED, Budget, BudgetExceeded
from fusionlab.ir.bytecode import Program
from fusionlab.costs import Bohrium, MaxContract, MaxLocality, Robinson
from fusionlab.analysis.wsp import PartitionState, WSPGraph, bit_indices
from fusionlab.partition._common import Context, ProgramOrState, coarsest_bound, dense, finish, setup
from fusionlab.partition.classes import shape_classes, solve_by_shape
from fusionlab.partition.greedy import greedy
from fusionlab.partition.ilp import ilp, start_worker, stop_worker
from fusionlab.partition.optimal import optimal
from fusionlab.partition.result import PartitionResult

_ILP_MODELS = (Bohrium, MaxContract, MaxLocality, Robinson)
# From this many instructions a solver process is started beside the branch and bound (its
# SciPy import takes about a second on a busy machine; smaller batches are proven in
# milliseconds, or solved by HiGHS in this process)
WORKER_INSTRUCTIONS = 64
# The ILP's share of the time after the branch and bound when the split by iteration shape
# could follow (one run on the shared machine, 2 s cells: 0.8 proved random_program(100,
# seed=2) and left random 200 at a gap of 7.5%, where 0.5 left 6.0% and 14.3%)
ILP_SHARE = 0.8


def exact(
    program_or_state: ProgramOrState, cost_model: Any = "bohrium", *, time_limit: float = 10.0,
    bnb_time: float = 0.25, use_ilp: bool = True, decompose: bool = True, max_nodes: int = 1_000_000, trace_limit: int = 20_000,
    budget: Budget | None = None,
) -> PartitionResult:
    """The cheapest legal partition, by the portfolio above, within ``time_limit`` seconds.

    Parameters
    ----------
    time_limit
        Seconds for the whole search, counted once the WSP graph is built, never past ``budget``.
    bnb_time
        Seconds for the branch and bound (of each part, at most half the time left) before
        the ILP takes over: it proves most captured batches in milliseconds, or not soon.
    use_ilp
        Run the ILP when the branch and bound stops unproven (``False``: the branch and bound alone).
    decompose
        Solve independent parts apart (programs and graphs only, not a partition state).
    max_nodes, trace_limit
        The branch and bound's node limit and how many nodes its trace records.
    budget
        The caller's :class:`~fusionlab.support.budget.Budget`.

    Examples
    --------
    >>> from fusionlab.ir.examples import fig3
    >>> r = exact(fig3(), "bohrium")
    >>> r.cost_elements, r.proven_optimal, r.notes[0]
    (38, True, 'proven optimal by the branch and bound')
    >>> cut = exact(fig3(), "bohrium", max_nodes=1, use_ilp=False)
    >>> cut.proven_optimal, cut.bound <= 304 <= cut.cost
    (False, True)
    """
    if not bnb_time > 0:
        raise ValueError(f"bnb_time must be a positive number of seconds, not {bnb_time!r}")
    ctx = setup(program_or_state, cost_model, budget)
    own = (UNLIMITED if budget is None else budget).child(time_limit)
    opts = dict(bnb_time=bnb_time, use_ilp=use_ilp, max_nodes=max_nodes, trace_limit=trace_limit)
    whole = isinstance(program_or_state, PartitionState) or not decompose
    parts = [] if whole else independent_parts(ctx)
    if len(parts) > 1:
        joined = _solve_parts(ctx, own, parts, opts)
        if joined is not None:
            return joined
    return _solve_one(ctx, own, opts, split=not whole)


def independent_parts(ctx: Context) -> list[list[int]]:
    """Groups of instructions that share no base, when the model lets them be solved apart
    (pairwise savings, no per-block bonus); one group otherwise.

    >>> from fusionlab import parse
    >>> p = parse("ARRAY A float64[4]\\nARRAY B float64[4]\\nCOPY A, 1\\nCOPY B, 2\\nSYNC A\\nSYNC B")
    >>> independent_parts(setup(p, "bohrium"))
    [[0, 2], [1, 3]]
    >>> independent_parts(setup(p, "robinson"))    # every merge saves a block: not apart
    [[0, 1, 2, 3]]
    """
    n = len(ctx.program)
    if dense(ctx.evaluator) or n == 0:
        return [list(range(n))]
    parent = list(range(n))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    first: dict[str, int] = {}
    for i, ins in enumerate(ctx.program):
        for v in ins.outputs + ins.views_in:
            j = first.setdefault(v.base.name, i)
            parent[find(i)] = find(j)
    for u, v in ctx.graph.dependencies:
        parent[find(u)] = find(v)
    groups: dict[int, list[int]] = {}
    for i in range(n):
        groups.setdefault(find(i), []).append(i)
    return sorted(groups.values())


def _subprogram(program: Program, members: list[int]) -> Program:
    """The instructions ``members`` (in order) over the bases they use."""
    names = {v.base.name for i in members for v in program[i].outputs + program[i].views_in}
    return Program(tuple(b for b in program.bases if b.name in names), tuple(program[i] for i in members))


def _same_rules(graph: WSPGraph, sub: WSPGraph, members: list[int]) -> bool:
    """Whether the part's fuse-preventing pairs are the whole graph's restricted to it: the
    same shapes, opaque instructions and explicit pairs (which decide every pair) — in time
    linear in the part, not quadratic."""
    inside = 0
    for g in members:
        inside |= 1 << g
    for k, g in enumerate(members):
        if sub.domain[k] != graph.domain[g] or sub.opaque[k] != graph.opaque[g]:
            return False
        mapped = 0
        for j in bit_indices(sub.explicit_mask[k]):
            mapped |= 1 << members[j]
        if mapped != graph.explicit_mask[g] & inside:
            return False
    return True


def _solve_parts(ctx: Context, own: Budget, parts: list[list[int]], opts: dict[str, Any]) -> PartitionResult | None:
    """Solve each part apart and join them; ``None`` when a check fails (solve the whole)."""
    blocks: list[list[int]] = []
    total = bound = 0.0
    proven, methods, sizes = True, set(), []  # methods: how each part was proven
    try:
        for k, members in enumerate(parts):
            # the part's graph is built for the backend the whole one is
            sub = WSPGraph(_subprogram(ctx.program, members), budget=own, capabilities=ctx.graph.capabilities)
            if not _same_rules(ctx.graph, sub, members):
                return None
            left = sum(len(p) for p in parts[k:])
            share = own.child(own.remaining() * len(members) / left)
            part_ctx = setup(sub, ctx.model, share)
            got = _solve_one(part_ctx, share, opts, split=True)
            blocks += [[members[i] for i in b] for b in got.blocks]
            total += got.cost
            bound += got.cost if got.proven_optimal else (got.bound if got.bound is not None else 0.0)
            proven = proven and got.proven_optimal
            methods.add(_method(got))
            sizes.append(len(members))
    except BudgetExceeded:
        return None
    result = finish(ctx, "exact", blocks)
    if not result.legal or abs(result.cost - total) > 1e-6 * max(1.0, abs(total)):
        return None  # the parts did not add up: solve the whole program instead
    if not proven and meets(ctx, result.cost, bound):
        proven = True  # the parts' bounds add up to the join's cost
        methods.add("the bounds")
    head = (f"{len(parts)} independent parts (largest {max(sizes)} of {len(ctx.program)} instructions), "
            f"solved apart")
    notes = [_verdict(proven, _how(methods), result.cost, bound), head]
    return finish(ctx, "exact", blocks, proven_optimal=proven, notes=notes,
                  bound=None if proven else max(bound, coarsest_bound(ctx)))


def _how(methods: Any) -> str:
    """The methods that proved the parts, each named once."""
    names = [name for name in ("the branch and bound", "the ILP", "the bounds") if any(name in m for m in methods)]
    return " and ".join(names)


def _method(r: PartitionResult) -> str:
    return r.notes[0].removeprefix("proven optimal by ") if r.proven_optimal and r.notes else ""


def _verdict(proven: bool, method: str, cost: float, bound: float) -> str:
    if proven:
        return f"proven optimal by {method}"
    gap = (cost - bound) / cost * 100 if cost else 0.0
    return f"not proven optimal: best {cost:g}, lower bound {bound:g} (gap {gap:.1f}%)"


def _solve_one(ctx: Context, own: Budget, opts: dict[str, Any], split: bool) -> PartitionResult:
    """One part: the portfolio, with the split by iteration shape between its two searches."""
    return _portfolio(ctx.state, ctx, own, split=split, **opts)


def _portfolio(state: PartitionState, ctx: Context, own: Budget, *, bnb_time: float, use_ilp: bool,
               max_nodes: int, trace_limit: int, split: bool = False) -> PartitionResult:
    """Branch and bound for ``bnb_time`` (its seeds are the fallback), then the ILP (half the
    time left when the split by iteration shape applies, else all), then the split."""
    ilp_too = use_ilp and isinstance(ctx.model, _ILP_MODELS)
    classes = shape_classes(ctx) if split else []
    # the solver process imports SciPy while the branch and bound runs
    worker = start_worker() if ilp_too and len(ctx.program) >= WORKER_INSTRUCTIONS else None
    try:
        return _steps(state, ctx, own, classes, worker, bnb_time=bnb_time, use_ilp=ilp_too, max_nodes=max_nodes,
                      trace_limit=trace_limit)
    finally:
        stop_worker(worker)


def _steps(state: PartitionState, ctx: Context, own: Budget, classes: list[list[int]], worker: Any, *,
           bnb_time: float, use_ilp: bool, max_nodes: int, trace_limit: int) -> PartitionResult:
    """The three searches of :func:`_portfolio`, each stopping the portfolio when it proves."""
    first = optimal(state, ctx.model, time_limit=min(bnb_time, own.remaining() / 2) if use_ilp or classes
                    else own.remaining(), max_nodes=max_nodes, trace_limit=trace_limit, budget=own)
    if first.proven_optimal:
        return finish(ctx, "exact", first.blocks, proven_optimal=True, trace=first.trace,
                      notes=["proven optimal by the branch and bound", *first.notes])
    results, bounds, notes = [first], [first.bound], [first.notes[0]]
    if not _seeded(first):
        # cut before its seeds (a loaded machine): greedy's partition is then the floor of
        # what exact returns, and the ILP's start
        results.append(greedy(state.copy(), ctx.model))
    seed = min((r for r in results if r.legal), key=lambda r: r.cost, default=None)
    if use_ilp and not own.expired():
        share = own.child(own.remaining() * (ILP_SHARE if classes else 1.0))
        second = ilp(state, ctx.model, time_limit=share.remaining(), budget=share, worker=worker,
                     incumbent=None if seed is None else [list(b) for b in seed.blocks])
        if second.proven_optimal:
            return finish(ctx, "exact", second.blocks, proven_optimal=True, trace=first.trace,
                          notes=["proven optimal by the ILP", *first.notes[:1], *second.notes])
        results.append(second)
        bounds.append(second.bound)
        notes.append(second.notes[0])
    if classes and not own.expired():
        opts = dict(bnb_time=bnb_time, use_ilp=use_ilp, max_nodes=max_nodes, trace_limit=trace_limit)
        got = _split(ctx, own, classes, opts)
        if got is not None and got.proven_optimal:
            return got
        if got is not None:
            results.append(got)
            bounds.append(got.bound)
            notes.append(got.notes[1])
    best = min((r for r in results if r.legal), key=lambda r: r.cost)
    bound = min(max([b for b in bounds if b is not None] + [coarsest_bound(ctx)]), best.cost)
    if meets(ctx, best.cost, bound):
        return finish(ctx, "exact", best.blocks, proven_optimal=True, trace=first.trace,
                      notes=[f"proven optimal by the bounds: the best found, {best.cost:g}, meets the lower bound",
                             *notes])
    return finish(ctx, "exact", best.blocks, proven_optimal=False, trace=first.trace,
                  notes=[_verdict(False, "", best.cost, bound), *notes], bound=bound, budget_cut="exact: search")


def meets(ctx: Context, cost: float, bound: float) -> bool:
    """Whether a proven lower bound proves ``cost`` optimal: equal within HiGHS's tolerance
    (1e-6 relative) or, under a model whose costs are whole numbers (Bohrium's bytes or
    elements, Max Contract's counts), no whole number lies between them.

    >>> from fusionlab import parse
    >>> ctx = setup(parse("ARRAY A float64[4]\\nCOPY A, 1\\nSYNC A"), "bohrium")
    >>> meets(ctx, 77400, 77399.99999), meets(ctx, 77400, 77399.0)
    (True, False)
    """
    tol = 1e-6 * max(1.0, abs(bound))
    if isinstance(ctx.model, (Bohrium, MaxContract)):
        return cost <= math.ceil(bound - tol) + 1e-9
    return cost <= bound + tol


def _seeded(r: PartitionResult) -> bool:
    """Whether the branch and bound's answer is at least its linear, unintrusive and greedy
    seeds (it was not cut before its search began)."""
    return r.legal and r.budget_cut in ("", "optimal: search")


def _split(ctx: Context, own: Budget, classes: list[list[int]], opts: dict[str, Any]) -> PartitionResult | None:
    """The split by iteration shape: the join (proven when legal and as cheap as the bound),
    with the classes' bound; ``None`` when it does not apply or ran out of time."""
    methods: list[str] = []

    def solve(sub: Context, budget: Budget) -> PartitionResult:
        got = _portfolio(sub.state, sub, budget, **opts)
        methods.append(_method(got))
        return got

    try:
        got = solve_by_shape(ctx, own, classes, solve)
    except BudgetExceeded:
        return None
    if got is None:
        return None
    blocks, proven, bound, note = got
    joined = finish(ctx, "exact", blocks)
    tol = 1e-6 * max(1.0, abs(bound))
    if joined.legal and joined.cost < bound - tol:
        bound = 0.0  # cannot happen when the argument in classes.py holds; never claim a wrong bound
    if joined.legal and proven and abs(joined.cost - bound) <= tol:
        return finish(ctx, "exact", blocks, proven_optimal=True, notes=[f"proven optimal by {_how(methods)}", note])
    return finish(ctx, "exact", blocks, notes=["not proven optimal", note + "; their join is not optimal or not legal"],
                  bound=bound)
