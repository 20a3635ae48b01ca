"""The ILP's tightening (partition/ilp_tighten.py): every row holds for every legal partition
(checked on all partitions of small random programs), the optimum is exhaustive search's
under all four models with and without each device, and the starting solution is feasible."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings

from fusionlab import parse
from fusionlab.support.budget import UNLIMITED
from fusionlab.ir.examples import random_program
from fusionlab.partition._common import setup
from fusionlab.partition.exhaustive import exhaustive
from fusionlab.partition.ilp import _build, _unit_succ, ilp
from fusionlab.partition.unintrusive import unintrusive_merge
from fusionlab.analysis.wsp import WSPGraph, partition_problems

from strategies import programs, set_partitions

MODELS = ["bohrium", "max_contract", "max_locality", "robinson"]


def _violated_rows(P, x) -> list[int]:
    """The rows (and bounds) of model ``P`` that the solution ``x`` breaks."""
    bad = [-1 - j for j, v in enumerate(x) if not P.lb[j] - 1e-9 <= v <= P.ub[j] + 1e-9]
    for k, (coef, lo, hi) in enumerate(P.rows):
        value = sum(c * x[j] for j, c in coef.items())
        if not lo - 1e-9 <= value <= hi + 1e-9:
            bad.append(k)
    return bad


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("precondition", [False, True])
@settings(max_examples=30, deadline=None)
@given(p=programs(min_size=2, max_size=7))
def test_every_legal_partition_satisfies_every_row_at_its_own_cost(model, precondition, p):
    # the "same block" indicators of a legal partition (its starting solution) meet every
    # row, the residues, convexity and clique rows included, and the objective is its cost:
    # so no row cuts off an optimum
    ctx = setup(WSPGraph(p), model)
    if precondition and ctx.evaluator.pairwise and ctx.evaluator.additive:
        unintrusive_merge(ctx.state, ctx.evaluator)
    P, layout = _build(ctx, UNLIMITED, None, tighten=True)
    succ = _unit_succ(ctx, layout.masks)
    units = [list(np.nonzero([m >> i & 1 for i in range(len(p))])[0]) for m in layout.masks]
    checked = 0
    for grouping in set_partitions(list(range(len(units)))):
        blocks = [[int(i) for u in g for i in units[u]] for g in grouping]
        if partition_problems(ctx.graph, blocks):
            continue
        x = layout.start(len(P.c), blocks, succ)
        assert x is not None
        assert _violated_rows(P, x) == []
        objective = sum(c * v for c, v in zip(P.c, x)) + P.constant
        assert objective == pytest.approx(ctx.evaluator.cost(blocks))
        checked += 1
    assert checked >= 1


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("tighten, precondition", [(True, True), (True, False), (False, True)])
@settings(max_examples=25, deadline=None)
@given(p=programs(max_size=8))
def test_the_tightened_ilp_equals_exhaustive_search(model, tighten, precondition, p):
    g = WSPGraph(p)
    truth = exhaustive(g, model)
    got = ilp(g, model, tighten=tighten, precondition=precondition, solver="inline")
    assert got.proven_optimal and got.legal
    assert got.cost == pytest.approx(truth.cost)


def test_residues_leave_no_direction_variable_for_pairs_of_two_shapes():
    p = parse("ARRAY A float64[4]\nARRAY B float64[5]\nARRAY C float64[4]\n"
              "COPY A, 1\nCOPY B, 2\nADD C, A, 1\nDEL A\nSYNC B\nSYNC C")
    ctx = setup(p, "bohrium")
    loose, plain = _build(ctx, UNLIMITED, None, tighten=False)
    tight, layout = _build(setup(p, "bohrium"), UNLIMITED, None, tighten=True)
    # COPY B is unordered against COPY A and ADD C: two directions without residues, none with
    assert len(plain.ys) == 2 and layout.ys == []
    assert layout.pos.residue == [0, 1, 0, None, None, None] and layout.pos.step == 2


def test_a_convexity_row_ties_a_pair_to_the_block_between_them():
    # 0 -> 1 -> 2 through B: 0 and 2 share a block only with 1
    p = parse("ARRAY A float64[4]\nARRAY B float64[4]\nARRAY C float64[4]\n"
              "COPY A, 1\nADD B, A, 1\nADD C, B, A\nSYNC A\nSYNC C\nDEL B")
    ctx = setup(p, "bohrium")
    P, layout = _build(ctx, UNLIMITED, None, tighten=True)
    s02, s01, s12 = layout.s_var[(0, 2)], layout.s_var[(0, 1)], layout.s_var[(1, 2)]
    rows = [coef for coef, lo, hi in P.rows if coef.get(s02) == 1.0 and hi == 0.0]
    assert {s01: -1.0, s02: 1.0} in rows and {s12: -1.0, s02: 1.0} in rows


def test_a_clique_row_lets_a_del_join_one_of_two_shapes():
    # A's two halves are written by a 2-element and a 3-element instruction: DEL A (which
    # excuses a write of A) joins one of them
    p = parse("ARRAY A float64[5]\nCOPY A[:2], 1\nCOPY A[2:], 2\nDEL A")
    ctx = setup(p, "bohrium")
    P, layout = _build(ctx, UNLIMITED, None, tighten=True)
    want = {layout.s_var[(0, 2)]: 1.0, layout.s_var[(1, 2)]: 1.0}
    assert [coef for coef, lo, hi in P.rows if coef == want] == [want]


@pytest.mark.parametrize("seed", [1, 2])
def test_the_tightened_ilp_equals_the_plain_one_on_larger_programs(seed):
    p = random_program(40, seed=seed)
    plain = ilp(p, "bohrium", tighten=False, precondition=False, time_limit=60)
    tight = ilp(p, "bohrium", time_limit=60)
    assert plain.proven_optimal and tight.proven_optimal and tight.legal
    assert tight.cost == plain.cost


def test_highs_from_a_starting_solution_reaches_the_same_optimum():
    from fusionlab.partition import _highs_worker
    from fusionlab.partition.ilp import _Seed

    ctx = setup(random_program(30, seed=3), "bohrium")
    seed = _Seed(ctx, UNLIMITED)
    seed.compute()
    P, layout = _build(ctx, UNLIMITED, None, tighten=True)
    start = layout.start(len(P.c), seed.blocks, _unit_succ(ctx, layout.masks))
    assert start is not None and _violated_rows(P, start) == []
    assert sum(c * v for c, v in zip(P.c, start)) + P.constant == pytest.approx(seed.cost)
    plain = _highs_worker.solve(P.problem(60))
    started = _highs_worker.solve(dict(P.problem(60), start=start))
    assert plain["status"] == started["status"] == 0
    assert started["fun"] == pytest.approx(plain["fun"]) and started["fun"] + P.constant <= seed.cost


@settings(max_examples=40, deadline=None)
@given(p=programs(min_size=3, max_size=8))
def test_the_relaxation_still_orders_every_separated_pair_a_path_orders(p):
    # the order rows left out (implied_orders) follow from the others: minimising o[b] - o[a]
    # over the linear relaxation still gives at least 1 for every such pair
    from fusionlab.partition import _highs_worker
    from fusionlab.partition.separation import separated
    from fusionlab.analysis.wsp import reachability

    ctx = setup(WSPGraph(p), "bohrium")
    P, layout = _build(ctx, UNLIMITED, None, tighten=True)
    succ = _unit_succ(ctx, layout.masks)
    ids = [ctx.state.block_of[(m & -m).bit_length() - 1] for m in layout.masks]
    reach = reachability(succ)
    sep = separated(succ, lambda a, b: ctx.state.compatible(ids[a], ids[b]))
    pos = layout.pos
    for a in range(len(ids)):
        for b in range(len(ids)):
            if not (sep[a] >> b & 1 and reach[a] >> b & 1):
                continue
            coef, const = pos.diff(b, a)
            cost = [0.0] * len(P.c)
            for j, c in coef.items():
                cost[j] = c
            problem = dict(P.problem(30), cost=cost, integrality=[0] * len(P.c))
            res = _highs_worker.solve(problem)
            assert res["status"] == 0 and res["fun"] + const >= 1 - 1e-6, (a, b)
