"""The fusion waterfall in measured time (issue 35): the partitions along a waterfall,
compiled and timed side by side, each step's change a difference of medians with an
interval; checked on a made-up timer (exact numbers) and on a real cell."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

from fusionlab.capture import capture
from fusionlab.explore.jupyter import FuseResult
from fusionlab.explore.measured_waterfall import MAX_POINTS, measured_waterfall, pick_points
from fusionlab.explore.waterfall import Step, StepKind, partitions_along, waterfall
from fusionlab.ir.examples import fig3
from fusionlab.partition import partition


def test_points_are_every_partition_or_evenly_spaced_with_both_ends() -> None:
    for steps in range(0, 60):
        got = pick_points(steps, 12)
        assert got[0] == 0 and got[-1] == steps and got == sorted(set(got))
        assert len(got) == min(steps + 1, 12)
    with pytest.raises(ValueError):
        pick_points(5, 1)


def record(median: float, samples: list[float], not_timed: str = "") -> SimpleNamespace:
    return SimpleNamespace(median_seconds=median, q1_seconds=min(samples or [math.nan]),
                           q3_seconds=max(samples or [math.nan]), samples=samples, not_timed=not_timed,
                           same_kernels_as="", not_checked="", max_abs_error=0.0)


def test_the_changes_are_differences_of_medians_that_add_up_and_cover_the_steps() -> None:
    p = fig3()
    a = partition(p, "singleton", "bohrium").blocks
    b = partition(p, "greedy", "bohrium").blocks
    steps = waterfall(p, a, b, "bohrium")
    asked = []

    def timer(variants):   # partition k takes 10 - (number of blocks) / 10 "seconds", in 3 rounds
        asked.extend(variants)
        rows = [record(10 - len(v[0]) / 10, [10 - len(v[0]) / 10 + d for d in (0.0, 0.01, -0.01)]) for v in variants]
        return [record(20.0, [20.0, 20.1, 19.9])] + rows

    got = measured_waterfall(timer, 0, a, steps)
    along = partitions_along(a, steps)
    at = pick_points(len(steps))
    assert [v[0] for v in asked] == [along[k] for k in at]   # the partitions the view shows, timed
    assert [pt["after"] for pt in got["points"]] == at and [pt["blocks"] for pt in got["points"]] == [len(along[k]) for k in at]
    assert sum(c["seconds"] for c in got["changes"]) == pytest.approx(got["total_seconds"])
    assert got["total_seconds"] == pytest.approx((len(a) - len(b)) / 10)
    for c, (p0, p1) in zip(got["changes"], zip(got["points"], got["points"][1:])):
        assert (c["from"], c["to"]) == (p0["after"], p1["after"])
        assert c["low"] <= c["ratio"] <= c["high"]
        assert c["ratio"] == pytest.approx(p0["median_seconds"] / p1["median_seconds"])
    assert got["numpy_median_seconds"] == 20.0 and got["rounds"] == 3


def test_a_point_not_timed_has_no_change_on_either_side() -> None:
    a = [(0,), (1,), (2,)]
    steps = [Step(StepKind.MERGE, (0,), (1,), 3, 2), Step(StepKind.MERGE, (0, 1), (2,), 2, 1)]

    def timer(variants):
        return [record(5.0, [5.0]), record(3.0, [3.0]), record(math.nan, [], "not timed: compile budget"),
                record(1.0, [1.0])]

    got = measured_waterfall(timer, 0, a, steps)
    assert [c["seconds"] for c in got["changes"]] == [None, None]
    assert got["points"][1]["not_timed"] == "not timed: compile budget" and got["total_seconds"] == pytest.approx(-2.0)


def test_a_real_cell_times_its_waterfall_and_the_report_carries_it() -> None:
    cap = capture("import numpy as np\na = np.arange(20000.0)\nb = a * 2 + 1\nc = np.sqrt(b) - a\nd = c * c + b\n"
                  "e = d.sum()\n")
    res = FuseResult(cap.batches, capture=cap, name="chain", algorithms=["singleton", "greedy"], cost_models=["bohrium"])
    report = res.report()
    [fall] = report["steps"]["waterfalls"]
    got = res.time_waterfall("greedy", "singleton", repeat=2)   # the stored direction is timed
    assert (got["a"], got["b"]) == (fall["a"], fall["b"]) and got["steps"] == fall["total"]
    assert len(got["points"]) == min(fall["total"] + 1, MAX_POINTS)
    ends = [pt["blocks"] for pt in (got["points"][0], got["points"][-1])]
    greedy = next(e for e in report["partitions"] if e["algorithm"] == "greedy")
    assert ends == [len(res.batches[0]), len(greedy["blocks"])][:: 1 if fall["a"] == ["singleton"] else -1]
    assert all(pt["median_seconds"] > 0 and pt["samples"] == 2 and not pt["not_checked"] for pt in got["points"])
    assert sum(c["seconds"] for c in got["changes"]) == pytest.approx(got["total_seconds"])
    assert res.report()["measured_waterfalls"] == [got]
    with pytest.raises(ValueError, match="no waterfall"):
        res.time_waterfall("greedy", "linear")
