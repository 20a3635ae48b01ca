"""Robinson, Keller and Lippmeier's ILP (002): the printed model, the completed one, and
both against the WSP partitions (optimal, ilp, exhaustive) under the Bohrium model."""

from __future__ import annotations

import io
from contextlib import redirect_stdout

import pytest

from fusionlab import parse
from fusionlab.ir.bytecode import OpFamily
from fusionlab.capture import capture
from fusionlab.partition import evaluate, partition
from fusionlab.partition.robinson_ilp import (
    as_partition, build_model, combinators_of, normalize2_combinators, robinson_ilp, slides_model, solve,
)
from fusionlab.workloads import WORKLOADS
from fusionlab.analysis.wsp import WSPGraph, partition_problems

# the slides' "Result clustering" (pairs named in program order: nor1 before ys and sum2)
SLIDES_RESULT = {("sum1", "ys"): 0, ("sum1", "sum2"): 0, ("sum1", "nor2"): 1, ("ys", "sum2"): 0,
                 ("nor1", "ys"): 1, ("nor1", "sum2"): 1, ("nor1", "nor2"): 0}


def test_completed_model_gives_the_slides_result():
    sol = solve(build_model(normalize2_combinators()))
    assert dict(sol.fused) == SLIDES_RESULT
    assert sol.clusters == (("sum1", "ys", "sum2"), ("nor1", "nor2"))
    assert sol.objective == 100 + 100 + 1 and sol.consistent


def test_printed_model_lets_unfused_pairs_claim_fusion():
    model = slides_model()
    assert len(model.rows) == 2 + 6 + 2 + 2   # filter, no-edge, fusible, non-fusible rows as printed
    sol = solve(model)
    # with no rows on f(sum1,nor2), f(ys,nor1), f(sum2,nor1) the minimum sets them to 0 ("fused")
    assert all(f == 0 for _, f in sol.fused) and sol.objective == 0
    assert sol.clusters == (("sum1", "ys", "sum2"), ("nor1", "nor2")) and not sol.consistent


def test_completed_model_has_the_missing_rows():
    text = build_model(normalize2_combinators()).describe()
    # the filter constraint for (sum2, nor1), which the slides do not print
    assert "-inf <= 1 f(nor1,ys) - 1 f(nor1,sum2) <= 0" in text
    assert "-inf <= 1 f(ys,sum2) - 1 f(nor1,sum2) <= 0" in text
    # the no-edge rows of (sum1, nor2), and f = 1 => o(sum1) != o(nor2)
    assert "-inf <= 1 o(nor2) - 1 o(sum1) - 100 f(sum1,nor2) <= 0" in text
    assert "1 o(nor2) - 1 o(sum1) + 100 d(sum1,nor2) - 100 f(sum1,nor2) >= -99" in text


def _normalize2():
    with redirect_stdout(io.StringIO()):
        (p,) = capture(WORKLOADS["normalize2"].script("tiny"), {}).batches
    return p


def _compute_clusters(program, blocks):
    out = [tuple(i for i in b if program[i].opcode not in OpFamily.SYSTEM) for b in blocks]
    return sorted(c for c in out if c)


@pytest.mark.parametrize("algorithm", ["optimal", "ilp"])
def test_captured_normalize2_agrees_with_the_wsp_optimum(algorithm):
    p = _normalize2()
    sol = robinson_ilp(p)
    # RANDOM xs, sum1, the mask, the filter, sum2 | nor1, nor2 (1-based names)
    assert sol.clusters == (("1", "2", "3", "4", "6"), ("7", "8")) and sol.consistent
    blocks = as_partition(p, sol)
    assert partition_problems(WSPGraph(p), blocks) == []
    best = partition(p, algorithm, "bohrium")
    assert _compute_clusters(p, blocks) == _compute_clusters(p, best.blocks)
    assert evaluate(p, blocks, "bohrium").cost == best.cost


def test_filter_fold_program_agrees_with_exhaustive_search():
    p = parse("""
ARRAY X float64[8]
ARRAY M bool[8]
ARRAY Y float64[4]
ARRAY S float64[]
ARRAY T float64[]
ARRAY Z float64[8]
RANGE X, start=-3.0, step=1.0
GREATER M, X, 0
COMPRESS Y, X, M
ADD_REDUCE S, Y
MAXIMUM_REDUCE T, X
MULTIPLY Z, X, S
DEL M
DEL Y
""")
    sol = robinson_ilp(p)
    assert sol.clusters == (("1", "2", "3", "4", "5"), ("6",))
    best = partition(p, "exhaustive", "bohrium")
    blocks = as_partition(p, sol)
    assert _compute_clusters(p, blocks) == _compute_clusters(p, best.blocks) == [(0, 1, 2, 3, 4), (5,)]
    assert evaluate(p, blocks, "bohrium").cost == best.cost


def test_programs_beyond_the_combinators_are_refused():
    p = parse("ARRAY A float64[4]\nARRAY B float64[4]\nRANGE A\nADD_ACCUMULATE B, A\n")
    with pytest.raises(ValueError, match="not one of the slides' combinators"):
        combinators_of(p)
    p = parse("ARRAY A float64[4]\nARRAY I int64[4]\nARRAY B float64[4]\nRANGE A\nRANGE I\nGATHER B, A, I\n")
    with pytest.raises(ValueError, match="GATHER.*not one of the slides' combinators"):
        combinators_of(p)
    p = parse("ARRAY A float64[4]\nRANGE A\nADD A, A, 1\n")
    with pytest.raises(ValueError, match="writes A again"):
        combinators_of(p)
