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

Tightened (:mod:`.ilp_tighten`, on by default): the units are the unintrusive partition's
blocks (merges that keep an optimum), positions carry a residue per iteration shape (no
direction binary between two shapes), convexity and clique rows tie the fusion variables
to the blocks between and beside them, order rows that others imply are left out, and
HiGHS starts from the best seed (SciPy's HiGHS binding; ``milp`` takes no start).

Time: before the model, the linear, unintrusive and greedy partitions are computed (the answer
when the model is not solved, and a check on an unproven solution). Building the model
checks the budget and stops as soon as it exceeds ``max_variables``. HiGHS runs in C,
where neither ``KeyboardInterrupt`` nor (in a long presolve) its own time limit always
reach it, so a model of more than a few hundred variables is solved in a process of its
own, asked for the time left and killed at the deadline or on ``KeyboardInterrupt``.
"""

from __future__ import annotations

import pickle
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from fusionlab.support.budget import UNLIMITED, Budget, BudgetExceeded
from fusionlab.costs import Bohrium, MaxContract, MaxLocality, Robinson, UnsupportedCostModel, graph_accesses
from fusionlab.analysis.wsp import bit_indices, partition_problems, reachability
from fusionlab.partition import _highs_worker
from fusionlab.partition._common import (
    Context, ProgramOrState, announce, coarsest_bound, cut_note, finish, setup,
)
from fusionlab.partition.greedy import greedy_merge
from fusionlab.partition.linear import LinearCut, linear_merge
from fusionlab.partition.result import PartitionResult
from fusionlab.partition.separation import separated_blocks
from fusionlab.partition.ilp_tighten import Layout, Positions, clique_rows, convexity_rows, implied_orders
from fusionlab.partition.unintrusive import unintrusive_merge

# Models up to this many variables are solved in this process (milliseconds); larger ones
# in a process of their own, which can be killed.
INLINE_VARIABLES = 300
# A solver process is killed this many seconds after the deadline; HiGHS is asked to stop
# this many seconds before it (to send its answer back).
_GRACE = 0.3
_MARGIN = 0.2
# Seconds a new solver process takes to start and import SciPy before HiGHS runs (0.4-0.5 s
# measured on 2 shared cores: asked for 0.05 s it answered after 0.47 s, for 0.41 s after
# 0.81 s). With solver="auto" and no started worker, a model HiGHS would have less time for
# than this is not sent: the process would spend its time starting and return the seed.
SOLVER_START = 0.4


def _view_key(v: Any) -> tuple[Any, ...]:
    return (v.base.name, v.offset, v.shape, v.strides)


class _TooLarge(Exception):
    """The model grew past ``max_variables``."""


class _Model:
    """Variables, rows and the objective of the integer program, built incrementally.

    Adding a variable or a row checks ``budget`` (every 256) and ``max_variables``, so
    building a model too large to solve stops early."""

    def __init__(self, budget: Budget = UNLIMITED, max_variables: int | None = None) -> None:
        self.lb: list[float] = []
        self.ub: list[float] = []
        self.integer: list[int] = []
        self.c: list[float] = []
        self.rows: list[tuple[dict[int, float], float, float]] = []
        self.constant = 0.0
        self.budget, self.max_variables = budget, max_variables
        self._steps = 0

    def _step(self) -> None:
        self._steps += 1
        if self._steps & 255 == 0:
            self.budget.check("ilp: model building")

    def var(self, lo: float, hi: float, integer: bool, cost: float = 0.0) -> int:
        if self.max_variables is not None and len(self.c) >= self.max_variables:
            raise _TooLarge
        self._step()
        self.lb.append(lo)
        self.ub.append(hi)
        self.integer.append(1 if integer else 0)
        self.c.append(cost)
        return len(self.c) - 1

    def row(self, coef: dict[int, float], lo: float, hi: float = np.inf) -> None:
        self._step()
        self.rows.append((coef, lo, hi))

    def problem(self, time_limit: float) -> dict[str, Any]:
        """The arrays of the milp call (plain lists: cheap to pickle)."""
        r, cidx, vals, lo, hi = [], [], [], [], []
        for k, (coef, a, b) in enumerate(self.rows):
            for j, v in coef.items():
                r.append(k)
                cidx.append(j)
                vals.append(v)
            lo.append(a)
            hi.append(b)
        return {"shape": (len(self.rows), len(self.c)), "r": r, "c": cidx, "vals": vals, "lo": lo, "hi": hi,
                "cost": self.c, "integrality": self.integer, "lb": self.lb, "ub": self.ub,
                "time_limit": time_limit}


def start_worker(argv: list[str] | None = None) -> subprocess.Popen[bytes]:
    """A solver process, started now: it imports SciPy (about a second on a busy machine)
    while the caller does other work, then waits for one problem. Pass it to :func:`ilp`
    (``worker=``) or :func:`solve_in_process`; :func:`stop_worker` ends an unused one.
    ``argv`` is the worker's command (default: this Python running ``_highs_worker.py``)."""
    argv = argv or [sys.executable, "-I", str(Path(_highs_worker.__file__))]
    return subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def stop_worker(proc: subprocess.Popen[bytes] | None) -> None:
    """End a solver process that was not used (or is still running)."""
    if proc is not None and proc.poll() is None:
        proc.kill()
        proc.communicate()


def solve_in_process(problem: dict[str, Any], kill_after: float, argv: list[str] | None = None,
                     proc: subprocess.Popen[bytes] | None = None) -> dict[str, Any] | None:
    """Solve ``problem`` in a process of its own (``proc``, started by :func:`start_worker`,
    or a new one); ``None`` when it had to be killed after ``kill_after`` seconds.
    ``KeyboardInterrupt`` kills it and propagates."""
    proc = proc if proc is not None and proc.poll() is None else start_worker(argv)
    try:
        out, err = proc.communicate(pickle.dumps(problem), timeout=max(kill_after, 0.01))
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return None
    except BaseException:  # KeyboardInterrupt above all: the solver must not outlive it
        proc.kill()
        proc.wait()
        raise
    if proc.returncode != 0:
        tail = err.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no message"]
        raise RuntimeError(f"the HiGHS solver process failed ({proc.returncode}): {tail[0]}")
    return pickle.loads(out)


def ilp(
    program_or_state: ProgramOrState, cost_model: Any = "bohrium", *, time_limit: float = 60.0,
    max_variables: int | None = None, budget: Budget | None = None, solver: str = "auto", cutoff: bool = False,
    tighten: bool = True, precondition: bool = True, worker: subprocess.Popen[bytes] | None = None,
    incumbent: list[list[int]] | None = None,
) -> PartitionResult:
    """The cheapest legal partition, from an integer linear program.

    Supports the built-in cost models (Bohrium, Max Contract, Max Locality, Robinson).

    Parameters
    ----------
    time_limit
        Seconds for the seeds, the model and the solver, counted once the WSP graph is built
        (that is bounded by ``budget`` alone), never past ``budget``.
    max_variables
        A larger model is not solved (interactive callers bound it).
    budget
        The caller's :class:`~fusionlab.support.budget.Budget`.
    solver
        ``"inline"`` (HiGHS in this process), ``"process"`` (in a process killed at the
        deadline), or ``"auto"``: a process above ``INLINE_VARIABLES`` variables.
    cutoff
        Ask only for partitions cheaper than the best seed (with integral costs): an
        infeasible model then proves the seed optimal (see :func:`_cutoff`). Off by default:
        HiGHS's dual bound suffers from the row (Gray-Scott's 181-instruction cell at 10 s:
        bound 102,098 with it, 114,152 without; Wave 1-D: 1,544 against 12,104).
    tighten
        Positions by residue, convexity and clique rows (:mod:`.ilp_tighten`): the same
        optimum, a smaller model with a tighter relaxation.
    precondition
        Formulate over the unintrusive partition's blocks (merges that keep an optimum,
        :mod:`.unintrusive`; pairwise additive models), not over single instructions.
    worker
        A solver process from :func:`start_worker` to use when the model is solved in a
        process (the caller ends it with :func:`stop_worker` when it was not used).
    incumbent
        A legal partition the caller found (the branch and bound's best): HiGHS starts from
        it, and the linear, unintrusive and greedy seeds are not computed again.

    When the model is not solved (too large, the time ran out first, HiGHS found no
    solution in time) the cheapest of the linear, unintrusive and greedy partitions is returned,
    not proven optimal; when HiGHS stops at its limit with a solution, the cheaper of that
    and the seeds. ``bound`` is HiGHS's proven lower bound when it has one.

    Examples
    --------
    >>> from fusionlab.ir.examples import fig3
    >>> r = ilp(fig3(), "bohrium")
    >>> r.cost_elements, r.proven_optimal
    (38, True)
    >>> small = ilp(fig3(), "bohrium", max_variables=10)
    >>> small.proven_optimal, small.cost_elements, small.notes[0][:48]
    (False, 38, 'not solved: the model would exceed max_variables')
    """
    if solver not in ("auto", "inline", "process"):
        raise ValueError(f"solver must be 'auto', 'inline' or 'process', not {solver!r}")
    # the graph is every algorithm's prerequisite: only the caller's budget bounds it, so a
    # short time_limit still leaves time to return the seeds
    ctx = setup(program_or_state, cost_model, budget)
    own = (UNLIMITED if budget is None else budget).child(time_limit)
    ctx.budget = own
    model = ctx.model
    if not isinstance(model, (Bohrium, MaxContract, MaxLocality, Robinson)):
        raise UnsupportedCostModel(
            f"ilp formulates the built-in cost models only, not {getattr(model, 'name', model)!r}; "
            "use algorithm 'optimal' (branch and bound), which takes any monotone model"
        )
    seed = _Seed(ctx, own)
    try:
        if incumbent is not None and not partition_problems(ctx.graph, incumbent):
            seed.offer([tuple(b) for b in incumbent], "the caller's partition")
        else:
            seed.compute()
        if precondition and ctx.evaluator.pairwise and ctx.evaluator.additive:
            unintrusive_merge(ctx.state, ctx.evaluator, budget=own, phase="ilp: unintrusive")
        P, layout = _build(ctx, own, max_variables, tighten)
    except BudgetExceeded as exc:
        return seed.finish([cut_note(exc, f"not solved; returning {seed.describe()}")], exc.phase)
    except _TooLarge:
        note = (f"not solved: the model would exceed max_variables={max_variables} variables "
                f"(at {len(ctx.state.members)} starting blocks); returning {seed.describe()}")
        return seed.finish([note])
    return _solve(ctx, own, seed, P, layout, solver, cutoff, worker)


class _Seed:
    """The linear, unintrusive and greedy partitions: the answer when the model is not solved."""

    def __init__(self, ctx: Context, budget: Budget) -> None:
        self.ctx, self.budget = ctx, budget
        self.blocks: list[list[int]] = [list(b) for b in ctx.state.blocks()]
        self.cost = ctx.evaluator.cost(self.blocks)
        self.which = "the starting partition"

    def offer(self, blocks: list[tuple[int, ...]], which: str) -> None:
        cost = self.ctx.evaluator.cost(blocks)
        if cost < self.cost - 1e-9:
            self.blocks, self.cost, self.which = [list(b) for b in blocks], cost, which

    def compute(self) -> None:
        ev, state = self.ctx.evaluator, self.ctx.state.copy()
        lined = state.copy()
        try:
            linear_merge(lined, self.budget, phase="ilp: seed")
        except LinearCut:
            pass   # the merges made so far are legal
        self.offer(lined.blocks(), "the linear partition")
        try:
            unintrusive_merge(state, ev, budget=self.budget, phase="ilp: seed")
        finally:
            self.offer(state.blocks(), "the unintrusive partition")
        try:
            greedy_merge(state, ev, budget=self.budget, phase="ilp: seed")
        finally:
            self.offer(state.blocks(), "the greedy partition")

    def describe(self) -> str:
        if self.which == "the caller's partition":
            return self.which
        return f"the best of the linear, unintrusive and greedy partitions ({self.which})"

    def finish(self, notes: list[str], cut: str = "", bound: float | None = None) -> PartitionResult:
        # unsolved, the answer still carries a proven bound: at worst all in one block
        bound = max(bound if bound is not None else -np.inf, coarsest_bound(self.ctx))
        return finish(self.ctx, "ilp", self.blocks, proven_optimal=False, notes=notes, bound=bound, budget_cut=cut)


def _solve(ctx: Context, own: Budget, seed: _Seed, P: _Model, layout: Layout,
           solver: str, use_cutoff: bool = False, worker: subprocess.Popen[bytes] | None = None) -> PartitionResult:
    """Run HiGHS on the model with the time left, from the best seed; read its answer."""
    masks = layout.masks
    m = len(masks)
    if m <= 1:
        return finish(ctx, "ilp", [list(bit_indices(mk)) for mk in masks], proven_optimal=True,
                      notes=["one starting block: nothing to solve"])
    try:
        announce(own, "ilp: solving")
    except BudgetExceeded as exc:
        return seed.finish([cut_note(exc, f"not solved; returning {seed.describe()}")], exc.phase)
    cutoff = use_cutoff and _cutoff(P, seed.cost)
    left = own.remaining()
    in_process = solver == "process" or (solver == "auto" and len(P.c) > INLINE_VARIABLES)
    # HiGHS looks at the clock between its steps, which take longer on larger models: a
    # tenth of the time is kept back (a killed solver returns neither its best nor its bound)
    problem = P.problem(min(max(left - max(_MARGIN, 0.1 * left), 0.05), 1e7))  # HiGHS wants a finite number
    problem["start"] = layout.start(len(P.c), seed.blocks, _unit_succ(ctx, masks))
    if solver == "auto" and in_process and worker is None and problem["time_limit"] < SOLVER_START:
        return seed.finish([f"not solved: HiGHS would have {problem['time_limit']:.2g} s, less than a solver process "
                            f"takes to start (about {SOLVER_START:g} s); returning {seed.describe()}; give the ILP "
                            f"more time to solve it", f"{len(P.c)} variables, {len(P.rows)} constraints"],
                           "ilp: solving")
    where = "a solver process" if in_process else "this process"
    started = time.perf_counter()
    if in_process:
        problem["deadline"] = time.time() + problem["time_limit"]
        res = solve_in_process(problem, left + _GRACE, proc=worker)
    else:
        res = _highs_worker.solve(problem)
    took = time.perf_counter() - started
    size = f"{len(P.c)} variables, {len(P.rows)} constraints"
    if res is None:
        note = (f"HiGHS did not stop at its time limit ({left:.3g} s left); {where} was killed after {took:.2f} s; "
                f"returning {seed.describe()}")
        return seed.finish([note, size], "ilp: solving")
    status = _status(res)
    solver_note = (f"HiGHS in {where}, asked for a time limit of {res['time_limit']:.3g} s: {status} after "
                   f"{took:.2f} s; {size}")
    if cutoff and res["status"] == 2:  # nothing cheaper than the seed: the seed is optimal
        return finish(ctx, "ilp", seed.blocks, proven_optimal=True,
                      notes=[f"no partition is cheaper than {seed.describe()}, which is optimal", solver_note])
    bound = res.get("mip_dual_bound")
    bound = float(bound) + P.constant if bound is not None and np.isfinite(bound) else None
    cut = "ilp: solving" if status == "time limit reached" else ""
    if res["x"] is None:
        return seed.finish([f"not proven optimal: HiGHS found no solution ({res['message']}); returning "
                            f"{seed.describe()}", solver_note], cut, bound)
    groups: dict[int, int] = {}
    for k in range(m):
        key = layout.pos.value(k, res["x"])
        groups[key] = groups.get(key, 0) | masks[k]
    blocks = [list(bit_indices(mk)) for mk in groups.values()]
    if res["status"] == 0:
        return finish(ctx, "ilp", blocks, proven_optimal=True, notes=[solver_note])
    notes = [f"not proven optimal: {res['message']}", solver_note]
    if ctx.evaluator.cost(blocks) > seed.cost + 1e-9:
        notes[0] += f"; HiGHS's best so far costs more than {seed.describe()}, returned instead"
        return seed.finish(notes, cut, bound)
    bound = max(bound if bound is not None else -np.inf, coarsest_bound(ctx))
    return finish(ctx, "ilp", blocks, proven_optimal=False, notes=notes, bound=bound, budget_cut=cut)


def _unit_succ(ctx: Context, masks: list[int]) -> list[list[int]]:
    """The successors of each starting block (indices into ``masks``)."""
    unit_of = {i: k for k, mask in enumerate(masks) for i in bit_indices(mask)}
    succ: list[set[int]] = [set() for _ in masks]
    for u, v in ctx.graph.dependencies:
        if unit_of[u] != unit_of[v]:
            succ[unit_of[u]].add(unit_of[v])
    return [sorted(t) for t in succ]


def _cutoff(P: _Model, seed_cost: float) -> bool:
    """Ask HiGHS only for partitions cheaper than the seed (a row ``cost <= seed - 1``).

    With integral costs (bytes, elements, counts) "cheaper" is "at least one less", and the
    row prunes every branch the seed already beats; an infeasible answer proves the seed
    optimal, often long before HiGHS would find the seed itself. Not added otherwise."""
    integral = all(float(c).is_integer() for c in P.c) and float(P.constant).is_integer()
    if not integral or not float(seed_cost).is_integer() or len(P.c) == 0:
        return False
    P.row({j: c for j, c in enumerate(P.c) if c}, -np.inf, seed_cost - 1 - P.constant)
    return True


def _status(res: dict[str, Any]) -> str:
    """HiGHS's outcome in words (milp's status 1 is an iteration or time limit)."""
    if res["status"] == 0:
        return "optimal"
    if res["status"] == 1 and "time limit" in res["message"].lower():
        return "time limit reached"
    return res["message"]


def _build(ctx: Context, budget: Budget, max_variables: int | None, tighten: bool = True) -> tuple[_Model, Layout]:
    """The integer program of the cost model over the starting blocks of ``ctx`` (with the
    rows of :mod:`.ilp_tighten` when ``tighten``)."""
    model, state = ctx.model, ctx.state
    ids = sorted(state.members, key=lambda b: state.first[b])
    masks = [state.members[b] for b in ids]
    m = len(ids)
    announce(budget, "ilp: model building")
    P = _Model(budget, max_variables)
    pos_of = {b: k for k, b in enumerate(ids)}
    unit_of = {i: k for k, mask in enumerate(masks) for i in bit_indices(mask)}
    succ = [sorted(pos_of[x] for x in state.succ[b]) for b in ids]
    pos = Positions(P, state, ids, residues=tighten)
    big = pos.big
    reach = reachability(succ, budget, "ilp: model building")
    # fuse-preventing pairs, and the pairs a path through a block separated from one of
    # them keeps apart: fewer fusion variables, and strict order rows the LP feels
    sep = separated_blocks(state, ids, succ, budget, "ilp: model building")
    layout = Layout(pos, masks, {}, [], [])
    s_var = layout.s_var

    def s(a: int, b: int) -> int | None:
        """The fusion variable of units a and b (None when they may never fuse)."""
        a, b = min(a, b), max(a, b)
        if a == b or sep[a] >> b & 1:
            return None
        if (a, b) not in s_var:
            v = s_var[(a, b)] = P.var(0, 1, True)
            pos.at_least(P, b, a, -big, {v: -big})  # s = 1: o[a] = o[b]
            pos.at_least(P, a, b, -big, {v: -big})
        return s_var[(a, b)]

    for a in range(m):
        for b in succ[a]:
            pos.at_least(P, b, a, 0)
    implied = implied_orders(reach, sep, budget, "ilp: model building")
    for a, b in ((a, b) for a in range(m) for b in bit_indices(sep[a] >> (a + 1) << (a + 1))):
        if reach[a] >> b & 1:
            if not implied[a] >> b & 1:
                pos.at_least(P, b, a, 1)
        elif reach[b] >> a & 1:
            if not implied[b] >> a & 1:
                pos.at_least(P, a, b, 1)
        elif not pos.distinct(a, b):
            y = P.var(0, 1, True)
            layout.ys.append((y, a, b))
            pos.at_least(P, b, a, 1, {y: big})
            pos.at_least(P, a, b, 1 - big, {y: -big})

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
        layout.pays.append((p, list(coef)))
        coef[p] = 1.0
        P.row(coef, 1)

    acc, synced = graph_accesses(ctx.graph)  # the graph's own (a part's may be the whole's)
    creator = {name: i for i, a in enumerate(acc) for name in a.new}
    deleter = {name: i for i, a in enumerate(acc) for name in a.deleted}

    def add_bohrium(scale: float, unit: str) -> None:
        size = (lambda v: v.nbytes) if unit == "bytes" else (lambda v: v.size)
        for reading in (True, False):
            users: dict[Any, list[int]] = {}
            for k, mask in enumerate(masks):
                views, new, dels = set(), set(), set()
                for i in bit_indices(mask):
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
    if tighten:
        phase = "ilp: model building"
        convexity_rows(P, sorted(s_var), succ, reach, s, s_var, budget, phase)
        clique_rows(P, s_var, sep, budget, phase)
    return P, layout
