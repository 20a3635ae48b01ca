"""An exact integer linear program for the WSP problem, solved by HiGHS (scipy.optimize.milp).

In the spirit of Robinson, Keller and Lippmeier's formulation (fusion variables per pair,
order variables per node, a constraint per edge kind):

- ``o[a]`` — an integer position per starting block; blocks of the answer are the groups
  of equal position, executed in increasing order, so the partition graph is acyclic;
- ``s[a, b]`` — binary "fused": ``s = 1`` forces ``o[a] = o[b]`` (two big-M rows);
- a dependency ``a -> b`` gives ``o[b] >= o[a]``; a fuse-preventing pair gives
  ``o[a] != o[b]`` (strict order when a path orders them, else a binary direction ``y``);
- the cost is linear in ``s`` (and helper ``pay``/``leader`` variables) for the four
  built-in models — Bohrium: the first reader (writer) of a view in a block pays for it
  unless the block creates (frees) its base; Max Contract: ``1 - s[creator, deleter]``;
  Max Locality: the static pair weights of the unfused pairs; Robinson: their combination
  plus one per block leader.

``s`` is only forced one way, so a solution can pay for a saving it could have had; the
minimum never does, and equals the cheapest legal partition.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp
from scipy.sparse import coo_matrix

from ..costs import Bohrium, MaxContract, MaxLocality, Robinson, access_info
from ..wsp import _bits, reachability
from ._common import ProgramOrState, finish, setup
from .result import PartitionResult


def _view_key(v: Any) -> tuple[Any, ...]:
    return (v.base.name, v.offset, v.shape, v.strides)


class _Model:
    """Variables, rows and the objective of the integer program, built incrementally."""

    def __init__(self) -> None:
        self.lb: list[float] = []
        self.ub: list[float] = []
        self.integer: list[int] = []
        self.c: list[float] = []
        self.rows: list[tuple[dict[int, float], float, float]] = []
        self.constant = 0.0

    def var(self, lo: float, hi: float, integer: bool, cost: float = 0.0) -> int:
        self.lb.append(lo)
        self.ub.append(hi)
        self.integer.append(1 if integer else 0)
        self.c.append(cost)
        return len(self.c) - 1

    def row(self, coef: dict[int, float], lo: float, hi: float = np.inf) -> None:
        self.rows.append((coef, lo, hi))

    def solve(self, time_limit: float) -> Any:
        r, cidx, vals, lo, hi = [], [], [], [], []
        for k, (coef, a, b) in enumerate(self.rows):
            for j, v in coef.items():
                r.append(k)
                cidx.append(j)
                vals.append(v)
            lo.append(a)
            hi.append(b)
        A = coo_matrix((vals, (r, cidx)), shape=(len(self.rows), len(self.c))).tocsr()
        cons = [LinearConstraint(A, lo, hi)] if self.rows else []
        return milp(
            c=np.array(self.c),
            integrality=np.array(self.integer),
            bounds=Bounds(self.lb, self.ub),
            constraints=cons,
            options={"time_limit": time_limit, "disp": False},
        )


def ilp(
    program_or_state: ProgramOrState, cost_model: Any = "bohrium", *, time_limit: float = 60.0,
    max_variables: int | None = None,
) -> PartitionResult:
    """The cheapest legal partition, from an integer linear program.

    Supports the built-in cost models (Bohrium, Max Contract, Max Locality, Robinson).
    HiGHS does not always stop at ``time_limit`` (presolve of a large model can run far
    longer), so interactive callers also pass ``max_variables``: a larger model is not
    solved, and the starting partition is returned with a note, not proven optimal.

    Examples
    --------
    >>> from fusionlab.examples import fig3
    >>> r = ilp(fig3(), "bohrium")
    >>> r.cost_elements, r.proven_optimal
    (38, True)
    """
    ctx = setup(program_or_state, cost_model)
    model, state = ctx.model, ctx.state
    if not isinstance(model, (Bohrium, MaxContract, MaxLocality, Robinson)):
        raise ValueError(
            f"ilp formulates the built-in cost models only, not {getattr(model, 'name', model)!r}; "
            "use algorithm 'optimal' (branch and bound), which takes any monotone model"
        )
    ids = sorted(state.members, key=lambda b: state.first[b])
    masks = [state.members[b] for b in ids]
    m = len(ids)
    pos = {b: k for k, b in enumerate(ids)}
    unit_of = {i: k for k, mask in enumerate(masks) for i in _bits(mask)}
    succ = [sorted(pos[x] for x in state.succ[b]) for b in ids]
    reach = reachability(succ)
    forbidden = {
        (a, b) for a in range(m) for b in range(a + 1, m) if state.forbidden_between(ids[a], ids[b]) is not None
    }
    P = _Model()
    big = max(m, 1)
    o = [P.var(0, m - 1, True) for _ in range(m)]
    s_var: dict[tuple[int, int], int] = {}

    def s(a: int, b: int) -> int | None:
        """The fusion variable of units a and b (None when they may never fuse)."""
        a, b = min(a, b), max(a, b)
        if a == b or (a, b) in forbidden:
            return None
        if (a, b) not in s_var:
            v = s_var[(a, b)] = P.var(0, 1, True)
            P.row({o[a]: 1, o[b]: -1, v: big}, -np.inf, big)
            P.row({o[b]: 1, o[a]: -1, v: big}, -np.inf, big)
        return s_var[(a, b)]

    for a in range(m):
        for b in succ[a]:
            P.row({o[b]: 1, o[a]: -1}, 0)
    for a, b in sorted(forbidden):
        if reach[a] >> b & 1:
            P.row({o[b]: 1, o[a]: -1}, 1)
        elif reach[b] >> a & 1:
            P.row({o[a]: 1, o[b]: -1}, 1)
        else:
            y = P.var(0, 1, True)
            P.row({o[b]: 1, o[a]: -1, y: big}, 1)
            P.row({o[a]: 1, o[b]: -1, y: -big}, 1 - big)

    def pay(weight: float, payer: int, excusers: list[int]) -> None:
        """Add ``weight * (1 - max(s[payer, e] for e in excusers))`` to the objective."""
        if weight == 0:
            return
        coef = {}
        for e in excusers:
            v = s(payer, e)
            if v is not None:
                coef[v] = 1.0
        if not coef:
            P.constant += weight
            return
        p = P.var(0, 1, False, weight)
        coef[p] = 1.0
        P.row(coef, 1)

    acc, synced = access_info(ctx.program)
    creator = {name: i for i, a in enumerate(acc) for name in a.new}
    deleter = {name: i for i, a in enumerate(acc) for name in a.deleted}

    def add_bohrium(scale: float, unit: str) -> None:
        size = (lambda v: v.nbytes) if unit == "bytes" else (lambda v: v.size)
        for reading in (True, False):
            users: dict[Any, list[int]] = {}
            for k, mask in enumerate(masks):
                views, new, dels = set(), set(), set()
                for i in _bits(mask):
                    views |= acc[i].reads if reading else acc[i].writes
                    new |= acc[i].new
                    dels |= acc[i].deleted
                for v in sorted(views, key=_view_key):  # a fixed order: HiGHS breaks ties by it
                    name = v.base.name
                    if reading and name in new:
                        continue
                    if not reading and name in dels and name not in synced:
                        continue
                    users.setdefault(v, []).append(k)
            for v, ks in users.items():
                name = v.base.name
                home = creator.get(name) if reading else (deleter.get(name) if name not in synced else None)
                for j, k in enumerate(ks):
                    excusers = ks[:j] + ([unit_of[home]] if home is not None and unit_of[home] != k else [])
                    pay(scale * size(v), k, excusers)

    def add_contract(scale: float) -> None:
        for name, c in creator.items():
            d = deleter.get(name)
            if d is None or name in synced:
                P.constant += scale
            elif unit_of[c] != unit_of[d]:
                pay(scale, unit_of[c], [unit_of[d]])

    def add_locality(scale: float) -> None:
        ctx_ml = MaxLocality().prepare(ctx.graph)
        weight: dict[tuple[int, int], float] = {}
        base = 0.0
        for f, row in enumerate(ctx_ml["w"]):
            for g, x in row.items():
                a, b = unit_of[f], unit_of[g]
                if a != b:
                    base += x
                    key = (min(a, b), max(a, b))
                    weight[key] = weight.get(key, 0) + x
        P.constant += scale * base
        for (a, b), x in weight.items():
            v = s(a, b)
            if v is not None:
                P.c[v] -= scale * x

    if isinstance(model, Bohrium):
        add_bohrium(1.0, model.unit)
    elif isinstance(model, MaxContract):
        add_contract(1.0)
    elif isinstance(model, MaxLocality):
        add_locality(1.0)
    else:
        n_arrays = len({v.base.name for ins in ctx.program for v in ins.reads() + ins.writes()})
        add_contract(float(n_arrays))
        add_locality(float(n_arrays) ** 2)
        for a in range(m):
            pay(1.0, a, list(range(a)))
    if max_variables is not None and len(P.c) > max_variables:
        note = (f"not solved: {len(P.c)} variables exceed max_variables={max_variables}; "
                "returning the start (the unintrusive partition)")
        return finish(ctx, "ilp", [list(_bits(mk)) for mk in masks], proven_optimal=False, notes=[note])
    started = time.perf_counter()
    res = P.solve(time_limit)
    notes = []
    if res.x is None:
        notes.append(f"HiGHS found no solution within {time_limit:g} s ({res.message}); returning the start")
        blocks = [list(_bits(mk)) for mk in masks]
        proven = False
    else:
        groups: dict[int, int] = {}
        for k in range(m):
            key = int(round(res.x[o[k]]))
            groups[key] = groups.get(key, 0) | masks[k]
        blocks = [list(_bits(mk)) for mk in groups.values()]
        proven = res.status == 0
        if not proven:
            notes.append(f"not proven optimal: {res.message}")
    notes.append(
        f"{len(P.c)} variables, {len(P.rows)} constraints, HiGHS {time.perf_counter() - started:.3f} s"
    )
    return finish(ctx, "ilp", blocks, proven_optimal=proven, notes=notes)
