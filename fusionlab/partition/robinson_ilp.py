"""Robinson, Keller and Lippmeier's integer linear program for fusing combinators (002).

The slides' model over a combinator program: a fusion variable ``f(a, b)`` per pair that
may share a loop (``0`` = fused), an order variable ``o(v)`` per combinator (a loop's
position), and per pair of combinators

- a *fusible edge* ``a -> b``: ``1 f(a,b) <= o(b) - o(a) <= M f(a,b)``;
- a *non-fusible edge* (``b`` needs all of a fold ``a``): ``o(a) < o(b)``;
- *no edge*: ``-M f(a,b) <= o(b) - o(a) <= M f(a,b)``;
- the *filter constraint* (loops of different sizes): a combinator at a filter's output
  rate fuses with one at its input rate only together with the filter,
  ``f(filter, a) <= f(a, b)`` and ``f(filter, b) <= f(a, b)``;

minimising ``sum w(a,b) f(a,b)`` with ``w = 100`` when the two share an array, else 1.
:func:`slides_model` is the model for normalize2 exactly as the slides print it;
:func:`build_model` builds it for any combinator program and adds what the printed model
lacks (docs/algorithms.md, "Robinson's ILP"): the no-edge rows of
every pair that has a fusion variable, the filter constraints of every pair of related
rates, and ``f(a,b) = 1 => o(a) != o(b)`` (a binary direction per pair without an edge),
without which the loops (equal ``o``) and the fused pairs (``f = 0``) disagree.

Examples
--------
>>> sol = solve(build_model(normalize2_combinators()))
>>> sol.clusters
(('sum1', 'ys', 'sum2'), ('nor1', 'nor2'))
>>> sol.objective, sol.consistent
(201.0, True)
>>> printed = solve(slides_model())
>>> printed.objective, printed.consistent
(0.0, False)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from fusionlab.ir.bytecode import OpFamily, Program
from fusionlab.analysis.filters import filter_folds, loop_domains

__all__ = ["Combinator", "RobinsonModel", "RobinsonSolution", "normalize2_combinators", "combinators_of",
           "build_model", "slides_model", "solve", "robinson_ilp", "as_partition"]

#: the slides' weights: a pair sharing an array, and any other pair of one rate
SHARED, UNSHARED = 100.0, 1.0
#: the slides' big M (larger than any difference of order variables here)
BIG = 100


@dataclass(frozen=True)
class Combinator:
    """One combinator: ``kind`` is map, fold, filter or generate; ``rate`` names the size
    of the loop it iterates (a filter iterates its input's rate; its output has the rate
    ``filter_rate``)."""

    name: str
    kind: str
    reads: tuple[str, ...]
    writes: str
    rate: str
    filter_rate: str | None = None


@dataclass(frozen=True)
class RobinsonModel:
    """The integer program: rows are ``(coefficients, lo, hi)`` over named variables."""

    names: tuple[str, ...]
    pairs: tuple[tuple[str, str], ...]
    weights: tuple[float, ...]
    rows: tuple[tuple[tuple[tuple[str, float], ...], float, float], ...]
    binaries: tuple[str, ...] = ()
    complete: bool = True

    def describe(self) -> list[str]:
        """The rows as text, as the slides write them."""
        out = []
        for coef, lo, hi in self.rows:
            expr = " + ".join(f"{c:g} {v}" for v, c in coef).replace("+ -", "- ")
            out.append(f"{lo:g} <= {expr} <= {hi:g}" if np.isfinite(hi) else f"{expr} >= {lo:g}")
        return out


@dataclass(frozen=True)
class RobinsonSolution:
    """HiGHS's answer: the fusion variables, the order, the loops (equal order, in order)."""

    fused: tuple[tuple[tuple[str, str], int], ...]
    order: tuple[tuple[str, int], ...]
    clusters: tuple[tuple[str, ...], ...]
    objective: float

    @property
    def consistent(self) -> bool:
        """Whether ``f(a,b) = 0`` exactly for the pairs that share a loop."""
        where = {n: o for n, o in self.order}
        return all((where[a] == where[b]) == (f == 0) for (a, b), f in self.fused)


def normalize2_combinators() -> list[Combinator]:
    """The slides' normalize2: ``sum1 = fold (+) 0 xs; nor1 = map (/ sum1) xs;
    ys = filter (> 0) xs; sum2 = fold (+) 0 ys; nor2 = map (/ sum2) xs``."""
    return [
        Combinator("sum1", "fold", ("xs",), "sum1", "xs"),
        Combinator("nor1", "map", ("xs", "sum1"), "nor1", "xs"),
        Combinator("ys", "filter", ("xs",), "ys", "xs", filter_rate="ys"),
        Combinator("sum2", "fold", ("ys",), "sum2", "ys"),
        Combinator("nor2", "map", ("xs", "sum2"), "nor2", "xs"),
    ]


def combinators_of(program: Program) -> list[Combinator]:
    """The computing instructions of ``program`` as combinators (named by their 1-based
    number): element-wise maps, folds, filters, generators; a filter-fold's rate is its
    filter's output rate. Scans, opaque instructions and arrays written twice (combinator
    programs are single assignment) are refused."""
    folds = filter_folds(program)
    domains = loop_domains(program)
    out = []
    written: set[str] = set()
    for i, ins in enumerate(program):
        op = ins.opcode
        if op in OpFamily.SYSTEM:
            continue
        # a gather reads its source anywhere, a histogram writes its bins anywhere: no map
        # the slides' fusible edges describe
        if op in OpFamily.OPAQUE | OpFamily.SCAN | OpFamily.GATHER | OpFamily.HISTOGRAM:
            raise ValueError(f"instruction {i + 1} ({op.name}) is not one of the slides' combinators "
                             "(map, fold, filter)")
        name = ins.outputs[0].base.name
        if name in written:
            raise ValueError(f"instruction {i + 1} writes {name} again: the slides' combinators assign each "
                             "array once")
        written.add(name)
        kind = ("fold" if op in OpFamily.REDUCTION else "filter" if op in OpFamily.FILTER
                else "generate" if op in OpFamily.GENERATOR else "map")
        rate = f"filter{folds[i] + 1}" if i in folds else f"{domains[i]}"
        reads = tuple(sorted({v.base.name for v in ins.views_in}))
        out.append(Combinator(str(i + 1), kind, reads, ins.outputs[0].base.name, rate,
                              f"filter{i + 1}" if kind == "filter" else None))
    return out


def _edges(cs: list[Combinator]) -> dict[tuple[str, str], bool]:
    """Producer -> consumer edges, ``True`` when fusible (a fold's result is complete only
    after its loop; loops of unrelated rates never fuse)."""
    writer = {c.writes: c for c in cs}
    edges = {}
    for c in cs:
        for name in c.reads:
            a = writer.get(name)
            if a is None or a is c:
                continue
            related = a.rate == c.rate or a.filter_rate == c.rate
            edges[(a.name, c.name)] = a.kind != "fold" and related
    return edges


def build_model(cs: list[Combinator]) -> RobinsonModel:
    """The slides' model of ``cs``, with the rows the printed model lacks (module doc)."""
    edges = _edges(cs)
    names = [c.name for c in cs]
    by = {c.name: c for c in cs}
    succ: dict[str, list[tuple[str, bool]]] = {n: [] for n in names}
    for (a, b), ok in edges.items():
        succ[a].append((b, ok))
    blocked = _blocked_pairs(names, succ)   # a path through a non-fusible edge: never one loop
    pairs, weights, rows, binaries, across = [], [], [], [], []
    for k, a in enumerate(names):
        for b in names[k + 1:]:
            key, edge = (a, b), edges.get((a, b), edges.get((b, a)))
            rel = _related(by[a], by[b], cs)
            if rel is None or key in blocked or edge is False:
                if edge is None and key not in blocked:
                    binaries.append(_apart(rows, a, b, None))   # never fused, never one loop
                continue
            pairs.append(key)
            shared = set(by[a].reads + (by[a].writes,)) & set(by[b].reads + (by[b].writes,))
            weights.append(SHARED if shared else UNSHARED)
            f = _f(a, b)
            if edge is not None:   # fusible edge: 1 f <= o(dst) - o(src) <= M f
                src, dst = key if (a, b) in edges else (b, a)
                rows.append((((f"o({dst})", 1.0), (f"o({src})", -1.0), (f, -1.0)), 0.0, np.inf))
                rows.append((((f"o({dst})", 1.0), (f"o({src})", -1.0), (f, -BIG)), -np.inf, 0.0))
            else:                  # no edge: -M f <= o(b) - o(a) <= M f, and f = 1 => o(a) != o(b)
                rows.append((((f"o({b})", 1.0), (f"o({a})", -1.0), (f, -BIG)), -np.inf, 0.0))
                rows.append((((f"o({b})", 1.0), (f"o({a})", -1.0), (f, BIG)), 0.0, np.inf))
                binaries.append(_apart(rows, a, b, f))
            if isinstance(rel, Combinator) and rel.name not in key:
                across.append((key, rel.name))
    have = set(pairs)
    for key, filt in across:   # the filter constraint: fused across rates only with the filter
        for x in key:
            other = tuple(sorted((filt, x), key=names.index))
            if other in have:
                rows.append((((_f(*other), 1.0), (_f(*key), -1.0)), -np.inf, 0.0))
            else:
                rows.append((((_f(*key), 1.0),), 1.0, np.inf))   # the filter can never join x
    for (a, b), ok in edges.items():
        if not ok:   # non-fusible edge: o(a) < o(b)
            rows.append((((f"o({b})", 1.0), (f"o({a})", -1.0)), 1.0, np.inf))
    return RobinsonModel(tuple(names), tuple(pairs), tuple(weights), tuple(rows), tuple(binaries), True)


def _related(x: Combinator, y: Combinator, cs: list[Combinator]) -> Combinator | bool | None:
    """``True`` for one rate; the filter when one is at its output rate and the other at
    its input rate (they fuse only with it); ``None`` for unrelated rates."""
    if x.rate == y.rate:
        return True
    for u, v in ((x, y), (y, x)):
        for f in cs:
            if f.filter_rate == u.rate and f.rate == v.rate:
                return f
    return None


def _f(a: str, b: str) -> str:
    return f"f({a},{b})"


def _apart(rows: list[Any], a: str, b: str, f: str | None) -> str:
    """Rows making ``o(a) != o(b)`` when ``f = 1`` (always when ``f`` is None), with a
    binary direction ``d``; returns ``d``'s name."""
    d = f"d({a},{b})"
    off = [] if f is None else [(f, BIG)]
    # o(b) - o(a) >= 1 - M d - M (1 - f)   and   o(a) - o(b) >= 1 - M (1 - d) - M (1 - f)
    rows.append((tuple([(f"o({b})", 1.0), (f"o({a})", -1.0), (d, BIG)] + [(x, -c) for x, c in off]),
                 1.0 - (BIG if f is not None else 0.0), np.inf))
    rows.append((tuple([(f"o({a})", 1.0), (f"o({b})", -1.0), (d, -BIG)] + [(x, -c) for x, c in off]),
                 1.0 - BIG - (BIG if f is not None else 0.0), np.inf))
    return d


def _blocked_pairs(names: list[str], succ: dict[str, list[tuple[str, bool]]]) -> set[tuple[str, str]]:
    """Pairs joined by a dependency path that contains a non-fusible edge."""
    order = {n: k for k, n in enumerate(names)}
    out = set()
    for start in names:
        stack, seen = [(start, False)], set()
        while stack:
            x, hard = stack.pop()
            for y, ok in succ[x]:
                state = (y, hard or not ok)
                if state in seen:
                    continue
                seen.add(state)
                if state[1]:
                    out.add(tuple(sorted((start, y), key=order.__getitem__)))
                stack.append(state)
    return out


def slides_model() -> RobinsonModel:
    """The model of normalize2 exactly as the slides print it ("All together")."""
    f = _f
    rows = [
        (((f("sum1", "ys"), 1.0), (f("sum1", "sum2"), -1.0)), -np.inf, 0.0),
        (((f("ys", "sum2"), 1.0), (f("sum1", "sum2"), -1.0)), -np.inf, 0.0),
    ]
    for a, b in (("sum1", "ys"), ("sum1", "sum2"), ("nor1", "nor2")):
        rows.append(((("o(%s)" % b, 1.0), ("o(%s)" % a, -1.0), (f(a, b), -BIG)), -np.inf, 0.0))
        rows.append(((("o(%s)" % b, 1.0), ("o(%s)" % a, -1.0), (f(a, b), BIG)), 0.0, np.inf))
    rows.append((((f"o(sum2)", 1.0), ("o(ys)", -1.0), (f("ys", "sum2"), -1.0)), 0.0, np.inf))
    rows.append((((f"o(sum2)", 1.0), ("o(ys)", -1.0), (f("ys", "sum2"), -BIG)), -np.inf, 0.0))
    rows.append(((("o(nor1)", 1.0), ("o(sum1)", -1.0)), 1.0, np.inf))
    rows.append(((("o(nor2)", 1.0), ("o(sum2)", -1.0)), 1.0, np.inf))
    pairs = (("sum1", "ys"), ("sum1", "sum2"), ("sum1", "nor2"), ("ys", "sum2"), ("ys", "nor1"),
             ("sum2", "nor1"), ("nor1", "nor2"))
    weights = (SHARED, UNSHARED, SHARED, SHARED, SHARED, UNSHARED, SHARED)
    return RobinsonModel(("sum1", "nor1", "ys", "sum2", "nor2"), pairs, weights, tuple(rows), (), False)


def solve(model: RobinsonModel) -> RobinsonSolution:
    """Solve with HiGHS (``scipy.optimize.milp``); raises ``RuntimeError`` if infeasible."""
    from scipy.optimize import Bounds, LinearConstraint, milp

    fvars = [_f(a, b) for a, b in model.pairs]
    ovars = [f"o({n})" for n in model.names]
    names = fvars + ovars + list(model.binaries)
    for coef, _, _ in model.rows:   # variables only a row names (the slides' unweighted f's)
        for v, _ in coef:
            if v not in names:
                names.append(v)
    index = {v: k for k, v in enumerate(names)}
    c = np.zeros(len(names))
    for v, w in zip(fvars, model.weights):
        c[index[v]] = w
    A = np.zeros((max(len(model.rows), 1), len(names)))
    lo, hi = np.full(len(A), -np.inf), np.full(len(A), np.inf)
    for r, (coef, a, b) in enumerate(model.rows):
        for v, x in coef:
            A[r, index[v]] += x
        lo[r], hi[r] = a, b
    ub = np.array([len(model.names) - 1 if v.startswith("o(") else 1 for v in names], dtype=float)
    res = milp(c, constraints=LinearConstraint(A, lo, hi), integrality=np.ones(len(names)),
               bounds=Bounds(np.zeros(len(names)), ub))
    if res.x is None:
        raise RuntimeError(f"HiGHS found no solution: {res.message}")
    x = np.round(res.x).astype(int)
    order = tuple((n, int(x[index[f"o({n})"]])) for n in model.names)
    groups: dict[int, list[str]] = {}
    for n, o in order:
        groups.setdefault(o, []).append(n)
    fused = tuple((p, int(x[index[v]])) for p, v in zip(model.pairs, fvars))
    return RobinsonSolution(fused, order, tuple(tuple(groups[k]) for k in sorted(groups)), float(res.fun))


def robinson_ilp(program: Program) -> RobinsonSolution:
    """The slides' ILP (completed) of a bytecode program's combinators, named by their
    1-based instruction numbers.

    >>> from fusionlab import parse
    >>> p = parse('''
    ... ARRAY X float64[8]
    ... ARRAY M bool[8]
    ... ARRAY Y float64[4]
    ... ARRAY S float64[]
    ... ARRAY T float64[]
    ... RANGE X, start=-3.0, step=1.0
    ... GREATER M, X, 0
    ... COMPRESS Y, X, M
    ... ADD_REDUCE S, Y
    ... MAXIMUM_REDUCE T, X
    ... ''')
    >>> robinson_ilp(p).clusters
    (('1', '2', '3', '4', '5'),)
    """
    return solve(build_model(combinators_of(program)))


def as_partition(program: Program, solution: RobinsonSolution) -> list[list[int]]:
    """The loops of ``solution`` as a partition of ``program`` (0-based): each DEL and SYNC
    joins the loop of the last instruction before it that uses its array, else its own."""
    block_of: dict[int, int] = {}
    for k, cluster in enumerate(solution.clusters):
        for name in cluster:
            block_of[int(name) - 1] = k
    blocks: list[list[int]] = [[] for _ in solution.clusters]
    for i, ins in enumerate(program):
        if i in block_of:
            blocks[block_of[i]].append(i)
            continue
        name = (ins.outputs + ins.views_in)[0].base.name
        users = [j for j in range(i) if j in block_of and any(v.base.name == name for v in
                                                               program[j].views_in + program[j].outputs)]
        if users:
            blocks[block_of[users[-1]]].append(i)
        else:
            blocks.append([i])
    return [sorted(b) for b in blocks if b]


