"""Greedy's replay and the fusion waterfall (fusionlab/explore/waterfall.py) against the
partitions themselves: every step is a legal partition, the steps' changes add up to the
difference of the two costs, and the replay ends where greedy does."""

from __future__ import annotations

import json
from importlib import resources

import jsonschema
import pytest
from hypothesis import given, settings

from fusionlab.analysis.wsp import WSPGraph
from fusionlab.capture import capture
from fusionlab.explore.report import STEPS_TOTAL, get_report
from fusionlab.explore.waterfall import Step, StepKind, common_refinement, greedy_replay, steps_data, waterfall
from fusionlab.ir.examples import fig3
from fusionlab.partition import evaluate, partition
from fusionlab.workloads import get_workload

from strategies import programs

MODELS = ["bohrium", "max_contract", "max_locality", "robinson"]
ALGORITHMS = ["singleton", "linear", "unintrusive", "greedy"]


def _apply(blocks: list[set[int]], step: Step) -> list[set[int]]:
    """The partition after ``step`` (an independent reading of what a step means)."""
    into = next(b for b in blocks if step.into[0] in b)
    assert set(step.into) == into - (set(step.moved) if step.kind is StepKind.SPLIT else set())
    moved = set(step.moved)
    rest = [b for b in blocks if b is not into and not (moved & b)]
    if step.kind is StepKind.MERGE:
        [piece] = [b for b in blocks if moved & b]
        assert piece == moved, "a merge moves a whole block"
        return rest + [into | moved]
    assert moved < into, "a split moves part of the block"
    return rest + [into - moved, moved]


def _walk(program, start, steps, model) -> list[set[int]]:
    """Check each step's partition: legal, costed as the step says; return the last one."""
    graph = WSPGraph(program)
    blocks = [set(b) for b in start]
    cost = evaluate(graph, [sorted(b) for b in blocks], model).cost
    for s in steps:
        assert s.cost_before == pytest.approx(cost, rel=1e-9, abs=1e-9)
        blocks = _apply(blocks, s)
        got = evaluate(graph, [sorted(b) for b in blocks], model)
        assert got.legal, (s.describe(), got.notes)
        assert s.cost_after == pytest.approx(got.cost, rel=1e-9, abs=1e-9)
        cost = got.cost
    return blocks


def _same(blocks, other) -> bool:
    return sorted(map(sorted, blocks)) == sorted(map(sorted, other))


def _check_pair(program, model, a_alg, b_alg) -> None:
    a = partition(program, a_alg, model).blocks
    b = partition(program, b_alg, model).blocks
    steps = waterfall(program, a, b, model)
    end = _walk(program, a, steps, model)
    assert _same(end, b)
    total = sum(s.change for s in steps)
    want = evaluate(program, b, model).cost - evaluate(program, a, model).cost
    assert total == pytest.approx(want, rel=1e-9, abs=1e-6)
    # splits first, then merges; as many steps as pieces to split off and to merge
    kinds = [s.kind for s in steps]
    assert kinds == sorted(kinds, key=lambda k: k is StepKind.MERGE)
    pieces = common_refinement(a, b)
    assert kinds.count(StepKind.SPLIT) == len(pieces) - len(a)
    assert kinds.count(StepKind.MERGE) == len(pieces) - len(b)


def test_fig3_singleton_to_greedy_merges_only_and_saves_the_paper_difference() -> None:
    p = fig3()
    a, b = partition(p, "singleton").blocks, partition(p, "greedy").blocks
    steps = waterfall(p, a, b, "bohrium")
    assert {s.kind for s in steps} == {StepKind.MERGE}
    assert (steps[0].cost_before, steps[-1].cost_after) == (94 * 8, 38 * 8)
    _check_pair(p, "bohrium", "singleton", "greedy")


def test_fig3_linear_to_greedy_splits_then_merges() -> None:
    # linear's blocks {3,4} and {10..17} are not greedy's: 2 splits, then 2 merges
    p = fig3()
    steps = waterfall(p, partition(p, "linear").blocks, partition(p, "greedy").blocks, "bohrium")
    assert [s.kind.value for s in steps] == ["split", "split", "merge", "merge"]
    assert [s.describe() for s in steps][-1] == "merge {12,13} into {1,2,5,6,7,8,9}: saves 64"
    assert sum(s.change for s in steps) == (38 - 62) * 8


def test_a_waterfall_between_equal_partitions_is_empty() -> None:
    p = fig3()
    b = partition(p, "greedy").blocks
    assert waterfall(p, b, b, "bohrium") == []


@pytest.mark.parametrize("model", MODELS)
def test_fig3_every_pair_under_every_model(model: str) -> None:
    for i, a in enumerate(ALGORITHMS):
        for b in ALGORITHMS[i + 1:]:
            _check_pair(fig3(), model, a, b)
            _check_pair(fig3(), model, b, a)


@pytest.mark.parametrize("name", ["heat_equation", "black_scholes", "sor", "gray_scott", "nbody_nice", "image_blur", "kmeans_step"])
def test_workloads_every_pair(name: str) -> None:
    batches = capture(get_workload(name).script("tiny"), {"__name__": "__main__"}).batches
    program = max(batches, key=len)
    for model in ("bohrium", "robinson"):
        _check_pair(program, model, "linear", "greedy")
        _check_pair(program, model, "greedy", "unintrusive")


@settings(max_examples=60, deadline=None)
@given(programs(max_size=10))
def test_random_programs_waterfalls_are_legal_and_add_up(program) -> None:
    for model in ("bohrium", "max_locality"):
        _check_pair(program, model, "linear", "greedy")
        _check_pair(program, model, "unintrusive", "linear")


@settings(max_examples=60, deadline=None)
@given(programs(max_size=10))
def test_random_programs_replay_ends_where_greedy_does(program) -> None:
    for model in MODELS:
        steps = greedy_replay(program, model)
        start = [[i] for i in range(len(program))]
        end = _walk(program, start, steps, model)
        assert _same(end, partition(program, "greedy", model).blocks)
        assert all(s.kind is StepKind.MERGE for s in steps)


def test_fig3_replay_is_greedys_order_heaviest_saving_first() -> None:
    steps = greedy_replay(fig3(), "bohrium")
    assert [s.describe() for s in steps[:2]] == ["merge {5} into {1}: saves 64", "merge {6} into {1,5}: saves 64"]
    assert steps[-1].cost_after == 38 * 8
    # greedy takes zero-saving merges last (Def. 15's complete weight graph)
    savings = [-s.change for s in steps]
    assert savings[-1] == 0 and min(savings) >= 0


def test_the_report_lists_replays_and_waterfalls_that_the_schema_accepts() -> None:
    report = get_report(fig3())
    schema = json.loads(resources.files("fusionlab").joinpath("data/explorer.schema.json").read_text())
    jsonschema.validate(report, schema)
    steps = report["steps"]
    assert {r["cost_model"] for r in steps["replays"]} == set(MODELS) and steps["not_made"] == ""
    bohrium = next(r for r in steps["replays"] if r["cost_model"] == "bohrium")
    assert bohrium["cost_before"] == 94 * 8 and bohrium["cost_after"] == 38 * 8 and bohrium["matches"]
    assert bohrium["steps"][0] == {"kind": "merge", "into": 1, "moved": [[5, 5]], "cost": 688}
    # one waterfall per two different partitions of a cost model; algorithms with the same blocks share it
    fall = next(w for w in steps["waterfalls"] if w["cost_model"] == "bohrium" and w["a"] == ["linear"]
                and "greedy" in w["b"])
    assert {"optimal", "ilp"} <= set(fall["b"]) and fall["total"] == 4
    assert fall["cost_before"] == 62 * 8 and fall["cost_after"] == 38 * 8
    entries = {(p["algorithm"], p["cost_model"]): p for p in report["partitions"]}
    for w in steps["waterfalls"]:
        a, b = entries[(w["a"][0], w["cost_model"])], entries[(w["b"][0], w["cost_model"])]
        assert (w["cost_before"], w["cost_after"]) == (a["cost"], b["cost"])
        assert _same(a["blocks"], entries[(w["a"][-1], w["cost_model"])]["blocks"])


def test_the_report_bounds_its_steps() -> None:
    src = "import numpy as np\nx = np.ones(1000)\nfor i in range(60):\n    x = x * 1.01 + 0.5\ns = float(x.sum())\n"
    program = max(capture(src).batches, key=len)
    report = get_report(program)
    listed = sum(len(x["steps"]) for k in ("replays", "waterfalls") for x in report["steps"][k])
    assert listed <= STEPS_TOTAL
    for x in report["steps"]["replays"] + report["steps"]["waterfalls"]:
        assert len(x["steps"]) <= report["steps"]["limit"] and x["total"] >= len(x["steps"])


def test_steps_data_is_compact_runs() -> None:
    got = steps_data([Step(StepKind.SPLIT, (4, 5), (6, 7, 8, 10), 3.0, 5.0)])
    assert got == {"steps": [{"kind": "split", "into": 5, "moved": [[7, 9], [11, 11]], "cost": 5.0}],
                   "total": 1, "cost_before": 3.0, "cost_after": 5.0}


def test_the_fallback_view_shows_the_selected_waterfall_and_greedys_merges() -> None:
    from fusionlab.explore.viz.fallback import fallback_html
    from fusionlab.explore.viz.steps import replayed

    report = get_report(fig3(), algorithms=["singleton", "linear", "greedy"], cost_models=["bohrium"])
    html = fallback_html(report)
    assert "Fusion waterfall: singleton to greedy" in html and "<b>−448</b> = 304 − 752" in html
    assert "Greedy's merges under bohrium, one at a time (13)" in html
    # the words of each step are the Python describe()'s, replayed from the listing alone
    replay = next(r for r in report["steps"]["replays"] if r["cost_model"] == "bohrium")
    words = replayed([[i] for i in range(1, 18)], replay["steps"])
    assert [w.replace(" ", "").replace("–", ",") for w in words[:3]] == [
        s.describe().split(":")[0].replace(" ", "") for s in greedy_replay(fig3(), "bohrium")[:3]]
    # the waterfall between linear and greedy, replayed from linear's blocks, ends on greedy's
    entries = {p["algorithm"]: p for p in report["partitions"]}
    fall = next(w for w in report["steps"]["waterfalls"] if w["a"] == ["linear"])
    assert [w.split(" ")[0] for w in replayed(entries["linear"]["blocks"], fall["steps"])] == \
        ["split", "split", "merge", "merge"]
