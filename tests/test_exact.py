"""The exact portfolio (partition/exact.py) and the separated pairs, against exhaustive search
and the ILP; stopped searches report a valid lower bound."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fusionlab import parse
from fusionlab.ir.examples import fig3, random_program
from fusionlab.partition import partition
from fusionlab.partition._common import setup
from fusionlab.partition.exact import exact, independent_parts
from fusionlab.partition.exhaustive import exhaustive
from fusionlab.partition.separation import separated
from fusionlab.analysis.wsp import WSPGraph, partition_problems

from strategies import programs, set_partitions

MODELS = ["bohrium", "max_contract", "max_locality", "robinson"]


def _renamed(text: str, prefix: str) -> str:
    """A program's text with every array renamed (a part sharing nothing with the other)."""
    return re.sub(r"\b([ABC]\d|s)\b", lambda m: prefix + m.group(1), text)


def _joined(p1, p2):
    """The two programs one after the other, over disjoint arrays."""
    t1, t2 = p1.to_text().splitlines(), _renamed(p2.to_text(), "Q").splitlines()
    decl = [x for x in t1 + t2 if x.startswith("ARRAY")]
    body = [x for x in t1 + t2 if not x.startswith("ARRAY")]
    return parse("\n".join(decl + body))


@pytest.mark.parametrize("model", MODELS)
@given(p=programs(max_size=8))
def test_exact_equals_exhaustive(model, p):
    g = WSPGraph(p)
    truth = exhaustive(g, model)
    got = exact(g, model, time_limit=30)
    assert got.proven_optimal and got.legal
    assert got.cost == pytest.approx(truth.cost)


@pytest.mark.parametrize("model", MODELS)
@settings(max_examples=40)
@given(p1=programs(min_size=2, max_size=5), p2=programs(min_size=2, max_size=5))
def test_independent_parts_joined_equal_exhaustive(model, p1, p2):
    p = _joined(p1, p2)
    g = WSPGraph(p)
    truth = exhaustive(g, model, max_blocks=12)
    got = exact(g, model, time_limit=30)
    assert got.proven_optimal and partition_problems(g, got.blocks) == []
    assert got.cost == pytest.approx(truth.cost)
    # no part of the answer mixes the two programs' instructions when they were solved apart
    if "independent parts" in " ".join(got.notes):
        n1 = len(p1)
        assert all(max(b) < n1 or min(b) >= n1 for b in got.blocks)


def test_parts_are_found_and_robinson_is_not_split():
    p = _joined(parse("ARRAY A0 float64[4]\nARRAY A1 float64[4]\nCOPY A0, 1\nADD A1, A0, 2\nDEL A0\nSYNC A1"),
                parse("ARRAY A0 float64[4]\nARRAY A1 float64[4]\nCOPY A0, 1\nADD A1, A0, 2\nDEL A0\nSYNC A1"))
    assert independent_parts(setup(p, "bohrium")) == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert independent_parts(setup(p, "robinson")) == [list(range(8))]
    r = exact(p, "bohrium")
    assert r.proven_optimal and "2 independent parts" in r.notes[1]
    assert r.cost == partition(p, "ilp", "bohrium").cost == 64
    assert r.numbered() == [[1, 2, 3, 4], [5, 6, 7, 8]]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_exact_equals_the_ilp_on_larger_programs(seed):
    p = random_program(40, seed=seed)
    truth = partition(p, "ilp", "bohrium", time_limit=60)
    assert truth.proven_optimal
    got = exact(p, "bohrium", time_limit=60)
    assert got.proven_optimal and got.legal and got.cost == pytest.approx(truth.cost)


def test_exact_on_a_workload_batch_the_branch_and_bound_does_not_prove():
    from fusionlab.capture import capture
    from fusionlab.workloads import get_workload

    batch = max(capture(get_workload("sor").script("tiny"), {"__name__": "__main__"}).batches, key=len)
    bnb = partition(batch, "optimal", "bohrium", max_nodes=2000)
    truth = partition(batch, "ilp", "bohrium", time_limit=60)
    got = exact(batch, "bohrium", time_limit=60, max_nodes=2000)
    assert truth.proven_optimal and got.proven_optimal
    assert got.cost == pytest.approx(truth.cost)
    assert not bnb.proven_optimal and bnb.bound <= truth.cost <= bnb.cost


@pytest.mark.parametrize("model", MODELS)
@settings(max_examples=25)
@given(p=programs(min_size=6, max_size=10))
def test_a_stopped_search_reports_best_so_far_and_a_valid_bound(model, p):
    g = WSPGraph(p)
    truth = partition(g, "ilp", model, time_limit=30)
    assert truth.proven_optimal
    for r in (exact(g, model, max_nodes=1, use_ilp=False, decompose=False),
              partition(g, "optimal", model, max_nodes=1),
              partition(g, "ilp", model, max_variables=1)):
        if r.proven_optimal:  # one node can be enough: the root is legal
            assert r.cost == pytest.approx(truth.cost)
            continue
        assert r.legal and r.bound is not None
        assert r.bound <= truth.cost + 1e-9 <= r.cost + 1e-9


def test_a_stopped_exact_search_says_so_with_the_gap():
    r = exact(fig3(), "bohrium", max_nodes=1, use_ilp=False)
    assert not r.proven_optimal
    # greedy's seed is already optimal; one node cannot prove it
    assert r.notes[0] == "not proven optimal: best 304, lower bound 240 (gap 21.1%)"
    assert (r.cost, r.bound) == (304, 240)
    line = r.format_text().splitlines()[-len(r.notes) - 1]
    assert f"lower bound {r.bound:g}" in line and "proven optimal" not in line


def test_optimal_cut_before_its_search_still_has_a_bound():
    # a zero time limit stops it before the first node: all in one block bounds the optimum
    r = partition(fig3(), "optimal", "bohrium", time_limit=0.0)
    assert not r.proven_optimal and r.bound is not None and r.bound <= 304


def test_separated_pairs_follow_paths_through_incompatible_blocks():
    # 0 -> 1 -> 2 -> 3; 1 is incompatible with 0, so 0 can join neither 2 nor 3
    sep = separated([[1], [2], [3], []], lambda a, b: {a, b} != {0, 1})
    assert sep == [0b1110, 0b0001, 0b0001, 0b0001]
    # no dependency path: nothing derived
    assert separated([[], [], []], lambda a, b: {a, b} != {0, 1}) == [0b10, 0b01, 0]


@settings(max_examples=40)
@given(p=programs(max_size=7))
def test_separated_pairs_never_share_a_block_of_a_legal_partition(p):
    g = WSPGraph(p)
    n = len(p)
    succ = [sorted({v for u, v in g.dependencies if u == i}) for i in range(n)]
    sep = separated(succ, lambda a, b: g.forbidden(a, b) is None)
    for blocks in set_partitions(list(range(n))):
        if partition_problems(g, blocks):
            continue
        for b in blocks:
            assert not any(sep[x] >> y & 1 for x in b for y in b)


@settings(max_examples=60)
@given(p=programs(min_size=3, max_size=8))
def test_the_shape_classes_bound_the_optimum_and_their_join_is_checked(p):
    from fusionlab.support.budget import UNLIMITED
    from fusionlab.partition._common import finish
    from fusionlab.partition.classes import shape_classes, solve_by_shape

    g = WSPGraph(p)
    truth = exhaustive(g, "bohrium")
    ctx = setup(g, "bohrium")
    classes = shape_classes(ctx)
    if not classes:
        return
    computing = [i for i in range(len(p)) if p[i].opcode.name not in ("DEL", "SYNC")]
    assert sorted(i for c in classes for i in c if i in computing) == computing  # each in exactly one class
    got = solve_by_shape(ctx, UNLIMITED, classes, lambda sub, budget: exhaustive(sub.graph, "bohrium"))
    assert got is not None
    blocks, proven, bound, _ = got
    assert proven and bound <= truth.cost + 1e-9
    joined = finish(ctx, "exact", blocks)
    assert sorted(i for b in blocks for i in b) == list(range(len(p)))
    if joined.legal and joined.cost == pytest.approx(bound):
        assert joined.cost == pytest.approx(truth.cost)


def test_the_ilp_and_the_shape_split_each_prove_a_batch_the_branch_and_bound_does_not():
    from fusionlab.support.budget import UNLIMITED
    from fusionlab.capture import capture
    from fusionlab.partition.classes import shape_classes
    from fusionlab.partition.exact import _split
    from fusionlab.workloads import get_workload

    batches = capture(get_workload("water_ice").script("tiny"), {"__name__": "__main__"}).batches
    batch = max(batches, key=len)
    whole = exact(batch, "bohrium", decompose=False, use_ilp=False, max_nodes=2000)  # the B&B alone
    got = exact(batch, "bohrium", time_limit=60)
    # the tightened ILP (1,359 variables; 8,557 before) proves the whole batch
    assert got.proven_optimal and got.legal and got.notes[0] == "proven optimal by the ILP"
    assert not whole.proven_optimal and whole.bound <= got.cost <= whole.cost
    assert got.cost == 116872  # greedy's 116968 is not optimal
    ctx = setup(batch, "bohrium")
    opts = dict(bnb_time=0.25, use_ilp=True, max_nodes=2000, trace_limit=100)
    split = _split(ctx, UNLIMITED.child(60), shape_classes(ctx), opts)
    assert split is not None and split.proven_optimal and split.cost == 116872
    assert "split by iteration shape" in split.notes[1]


def test_the_explorer_shows_the_gap_of_a_stopped_exact_search():
    from fusionlab.explore.viz.listing import partition_summary

    r = exact(fig3(), "bohrium", max_nodes=1, use_ilp=False)
    entry = {"algorithm": "exact", "cost_model": "bohrium", "status": "budget", "cost": r.cost, "unit": "bytes",
             "cost_elements": r.cost_elements, "blocks": r.numbered(), "legal": r.legal,
             "proven_optimal": r.proven_optimal, "bound": r.bound}
    assert partition_summary(entry) == ("exact / bohrium: 4 blocks, cost 304 bytes (38 elements), legal, "
                                        "not proven optimal (best so far; lower bound 240, gap 21.1%)")


def test_the_command_line_runs_exact_with_its_time_limit(capsys):
    from fusionlab.cli import main

    assert main(["partition", "fig3", "-a", "exact", "--time-limit", "5", "--max-nodes", "1"]) == 0
    out = capsys.readouterr().out
    # the optimum's cost is 38 elements; which of the equal-cost partitions comes back is a tie
    assert re.search(r"exact / bohrium: \d+ blocks, cost 304 bytes \(38 elements\), legal, proven optimal", out)
    # one node is not enough for the branch and bound on the whole: the ILP proves it
    assert "note: proven optimal by the ILP" in out


def test_the_branch_and_bound_drops_edges_between_separated_blocks():
    from fusionlab.capture import capture
    from fusionlab.workloads import get_workload

    batch = max(capture(get_workload("nbody_nice").script("tiny"), {"__name__": "__main__"}).batches, key=len)
    r = partition(batch, "optimal", "bohrium", max_nodes=1000, time_limit=60)
    truth = partition(batch, "ilp", "bohrium", time_limit=60)
    # with the edges an optimum never uses gone, the root's bound meets greedy's seed
    assert r.proven_optimal and truth.proven_optimal and r.cost == truth.cost == 20904


_OPAQUE = parse('ARRAY A float64[4]\nARRAY B float64[4]\nARRAY C float64[4]\nCOPY A, 1\n'
                'OPAQUE B, A, name="np.sort"\nOPAQUE C, A, name="np.sort"\nADD A, A, 1\nDEL A\nSYNC B\nSYNC C')


@settings(max_examples=60)
@given(p=st.one_of(programs(min_size=2, max_size=9), st.just(_OPAQUE)))
def test_separated_blocks_from_masks_equal_the_pairwise_rule(p):
    # the ILP and the branch and bound derive the separated pairs from shape, explicit and
    # opaque masks, without asking every pair: the same pairs as compatible() pair by pair
    from fusionlab.partition.separation import separated_blocks
    from fusionlab.partition.unintrusive import unintrusive_merge
    from fusionlab.analysis.wsp import PartitionState

    g = WSPGraph(p)
    for merged in (False, True):
        state = PartitionState(g)
        if merged:
            ctx = setup(g, "bohrium")
            unintrusive_merge(ctx.state, ctx.evaluator)
            state = ctx.state
        ids = sorted(state.members, key=lambda b: state.first[b])
        pos = {b: k for k, b in enumerate(ids)}
        succ = [sorted(pos[x] for x in state.succ[b]) for b in ids]
        pairwise = separated(succ, lambda a, b: state.compatible(ids[a], ids[b]))
        assert separated_blocks(state, ids, succ) == pairwise


def test_exact_is_never_worse_than_greedy_when_the_branch_and_bound_is_cut_before_its_seeds(monkeypatch):
    """On a loaded machine the branch and bound's quarter second can end before it has
    seeded itself with greedy's partition; exact then still returns at least greedy's."""
    import importlib

    from fusionlab.ir.examples import random_program
    from fusionlab.partition.greedy import greedy
    from fusionlab.partition.optimal import optimal as real_optimal

    exact_module = importlib.import_module("fusionlab.partition.exact")
    program = random_program(150, seed=3)

    def cut_early(state, model, **kw):
        kw["time_limit"] = 1e-6
        got = real_optimal(state, model, **kw)
        assert not exact_module._seeded(got)   # the situation under test
        return got

    monkeypatch.setattr(exact_module, "optimal", cut_early)
    got = exact_module.exact(program, "bohrium", time_limit=0.3, use_ilp=False, decompose=False)
    assert got.legal and got.cost <= greedy(program, "bohrium").cost
