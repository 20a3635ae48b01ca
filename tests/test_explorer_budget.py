"""The explorer's own budgets on student cells (issue 13): "Compile & time"'s timed runs and
check within a run budget, Kernel -> Interrupt between runs, and kernel plans kept between
clicks. No test reads the wall clock: an injected clock advanced by the runs themselves
(NumPy's baseline and the fused driver each take a set number of "seconds"), counted
calls, and budgets of 0 s and infinity decide every outcome."""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
import pytest

import fusionlab.pipeline.comparison as runner
import fusionlab.pipeline.planning as planning
from fusionlab.support.budget import Budget, Interrupt
from fusionlab.capture import capture
from fusionlab.pipeline import compare
from fusionlab.pipeline.timed_runs import CHECK_RUNS, RunBudget
from fusionlab.backend.numba.plan import Plan
from fusionlab.explore.jupyter import FuseResult

SOURCE = "import numpy as np\nx = np.arange(64.0)\ny = np.sqrt(x) * 2.0\nz = y - x\n"
# two batches (the float() syncs in between): plans are made per batch
TWO_BATCHES = "import numpy as np\nx = np.arange(64.0)\ny = np.sqrt(x)\ns = float(y.sum())\nz = y * s\n"


class Clock:
    """Seconds that pass only when a run says so."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _slow_driver(monkeypatch: pytest.MonkeyPatch, clock: Clock, seconds: float,
                 on_call: Callable[[int], None] | None = None) -> list[int]:
    """Every fused run (warm-up included) takes ``seconds`` on ``clock``; returns the call log."""
    calls: list[int] = []

    class Slow(runner.Driver):  # type: ignore[misc, valid-type]
        def __call__(self) -> Any:
            out = super().__call__()
            calls.append(len(calls) + 1)
            clock.now += seconds
            if on_call is not None:
                on_call(len(calls))
            return out

    monkeypatch.setattr(runner, "Driver", Slow)
    return calls


def _baseline(clock: Clock, seconds: float) -> tuple[Callable[[], None], list[int]]:
    calls: list[int] = []

    def run() -> None:
        calls.append(1)
        clock.now += seconds

    return run, calls


def test_the_run_budget_counts_runs_from_one_runs_time() -> None:
    clock = Clock()
    runs = RunBudget(Budget(20.0, clock=clock), repeat=3)
    assert runs.count(5.0, rows_left=1) == 3          # 20 s share, 5 s runs: all three
    assert runs.count(5.0, rows_left=2) == 2          # 10 s share
    assert runs.count(15.0, rows_left=4) == 1         # share too small, but one fits in what is left
    assert runs.count(15.0, rows_left=4, at_least_one=False) == 0
    assert runs.count(21.0, rows_left=1) == 0         # not even one
    assert RunBudget(None, repeat=3).count(1e9, rows_left=9) == 3
    # a run that took longer than predicted: the next is not started
    slow, _ = _baseline(clock, 12.0)
    times, _, note = runs.timed(slow, 3)
    assert times == [12.0] and note.startswith("1 of 3 timed runs")


def _compared(monkeypatch: pytest.MonkeyPatch, fused_seconds: float, numpy_seconds: float, run_seconds: float | None,
              algorithms: list[str], models: list[str]) -> tuple[list[Any], list[int], list[int], Clock]:
    """``compare`` of SOURCE on a clock that moves only when a run says so: every fused run
    takes ``fused_seconds``, NumPy's ``numpy_seconds``, the runs ``run_seconds`` in all
    (three asked for each row); the records, the fused and the NumPy call logs, the clock."""
    clock = Clock()
    fused = _slow_driver(monkeypatch, clock, fused_seconds)
    baseline, plain = _baseline(clock, numpy_seconds)
    # NumPy on the recorded operations takes no time on this clock: not a sign of work
    # outside the recording here (test_not_comparable.py tests that)
    monkeypatch.setattr(runner, "OUTSIDE_RATIO", math.inf)
    records = compare(capture(SOURCE), algorithms, models, repeat=3, min_size=0, baseline=baseline,
                      run_seconds=Budget(run_seconds, clock=clock))
    return records, fused, plain, clock


def test_a_long_cell_takes_fewer_rounds_says_so_and_is_not_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    # two rows with other kernels (rows with the same kernels are timed once: the next test)
    records, fused, plain, clock = _compared(monkeypatch, 4.0, 10.0, 40.0, ["greedy", "singleton"], ["bohrium"])
    numpy, first, second = records
    # NumPy's 10 s warm-up leaves 30 s: one round of 18 s fits (10 + 4 + 4, and NumPy on the
    # recorded operations, which takes no time on this clock), not two, nor a warm-up round
    assert records.protocol["rounds"] == 1 and records.protocol["warmup_rounds"] == 0
    assert "1 of 3 rounds" in records.protocol["fewer"] and "takes about 18 s" in records.protocol["fewer"]
    # NumPy: its 10 s warm-up counts as one run beside its round
    assert len(plain) == 2 and numpy.samples == [10.0, 10.0] and numpy.median_seconds == 10.0
    assert any("2 of 3 timed runs (the warm-up counted as one)" in w for w in numpy.warnings)
    for row in (first, second):   # each fused row: its warm-up (the compile budget's), then the round
        assert row.samples == [4.0] and not row.not_timed
        assert any(w.startswith("1 of 3 timed runs") for w in row.warnings)
        # the check (about CHECK_RUNS NumPy runs) never fits: said, never skipped silently
        assert row.not_checked.startswith("not checked:") and row.max_abs_error is None
        assert row.not_checked in row.warnings
        # one round: no interval, so no row is called different from another, nor from NumPy
        assert math.isnan(row.speedup_low) and row.speedup == 2.5
    assert set(first.not_different) == {"numpy", "singleton / bohrium"}
    # predicted from NumPy's run (the check is a plain run and a replay), not the fused row's
    assert f"about {CHECK_RUNS * 10.0:.2g} s" in first.not_checked and second.not_checked == first.not_checked
    assert len(fused) == 2 * (1 + 1)
    assert clock.now == 10.0 + 2 * 4.0 + 18.0      # NumPy's warm-up, the rows' warm-ups, one round


def test_a_row_with_an_earlier_rows_kernels_takes_no_run(monkeypatch: pytest.MonkeyPatch) -> None:
    records, fused, _, _ = _compared(monkeypatch, 4.0, 1.0, 100.0, ["greedy"], ["bohrium", "robinson"])
    first, second = records[1:]
    assert len(fused) == 1 + 1 + 3                # its warm-up, the warm-up round, three rounds: for both rows
    assert second.samples == first.samples == [4.0, 4.0, 4.0] and second.same_kernels_as == "greedy / bohrium"
    assert records.protocol["orders"][1][0] == "greedy / bohrium"   # the second round starts with the row


def test_rounds_rotate_their_order_and_pair_their_times(monkeypatch: pytest.MonkeyPatch) -> None:
    records, _, _, _ = _compared(monkeypatch, 2.0, 6.0, None, ["greedy", "singleton"], ["bohrium"])
    orders = records.protocol["orders"]
    assert len(orders) == 3 and [o[0] for o in orders] == ["numpy", "greedy / bohrium", "singleton / bohrium"]
    assert all(sorted(o) == sorted(orders[0]) for o in orders)       # every variant once a round
    for row in records[1:]:   # the same times every round: the interval is the point, and 1x is outside it
        assert (row.speedup, row.speedup_low, row.speedup_high) == (3.0, 3.0, 3.0)
        assert "numpy" not in row.not_different
    assert records[1].not_different == ["singleton / bohrium"]       # equal speed-ups overlap


def test_rows_no_run_fits_are_not_timed_and_not_compiled(monkeypatch: pytest.MonkeyPatch) -> None:
    records, fused, _, _ = _compared(monkeypatch, 1.0, 15.0, 16.0, ["greedy"], ["bohrium", "robinson"])
    assert records[0].samples == [15.0]           # the warm-up alone: nothing more fits
    assert records[0].warnings[-1].startswith("1 of 3 timed runs (the warm-up counted as one)")
    for r in records[1:]:
        assert r.not_timed == ("not timed: the time budget of 16 s for the runs spent before this row "
                               "(one run takes about 15 s)")
        assert math.isnan(r.median_seconds)
    assert fused == []                            # no warm-up, so no kernel compiled either


def test_the_check_is_made_once_for_every_row(monkeypatch: pytest.MonkeyPatch) -> None:
    made = {"plain": 0, "replay": 0}
    plain_namespace, propagate = runner.plain_namespace, runner.propagate

    def counted_plain(*args: Any, **kwargs: Any) -> Any:
        made["plain"] += 1
        return plain_namespace(*args, **kwargs)

    def counted_replay(*args: Any) -> Any:
        made["replay"] += 1
        return propagate(*args)

    monkeypatch.setattr(runner, "plain_namespace", counted_plain)
    monkeypatch.setattr(runner, "propagate", counted_replay)
    models = ["bohrium", "robinson", "max_contract"]
    records = compare(capture(SOURCE), ["greedy", "singleton"], models, repeat=2, min_size=0)
    assert made == {"plain": 1, "replay": 1}
    for r in records[1:]:
        assert not r.not_timed and not r.not_checked and r.max_abs_error == 0.0 and len(r.samples) == 2


def test_the_check_finds_a_wrong_value_once_made(monkeypatch: pytest.MonkeyPatch) -> None:
    # the fused values compared are the row's last run's: a driver returning a wrong z is caught
    class Wrong(runner.Driver):  # type: ignore[misc, valid-type]
        def __call__(self) -> Any:
            out = dict(super().__call__())
            for k, v in out.items():
                out[k] = np.asarray(v) + 1.0
            return out

    monkeypatch.setattr(runner, "Driver", Wrong)
    records = compare(capture(SOURCE), ["greedy"], ["bohrium"], repeat=1, min_size=0)
    assert records[1].max_abs_error == pytest.approx(1.0)
    assert any(w.startswith("differs from plain NumPy") for w in records[1].warnings)


@pytest.mark.parametrize("call, rounds", [(7, 1), (1, 0)])
def test_an_interrupt_between_runs_keeps_the_rounds_done(monkeypatch: pytest.MonkeyPatch, call: int,
                                                         rounds: int) -> None:
    # fused calls: two warm-ups (greedy, singleton), the warm-up round (3, 4), round 1 (5, 6),
    # round 2 starts with greedy (7): Kernel -> Interrupt after it drops round 2; after the
    # first warm-up it stops everything before the first round
    clock = Clock()
    intr = Interrupt()

    def press(n: int) -> None:
        if n == call:
            intr.pending = True

    fused = _slow_driver(monkeypatch, clock, 1.0, press)
    baseline, _ = _baseline(clock, 1.0)
    records = compare(capture(SOURCE), ["greedy", "singleton"], ["bohrium", "robinson"], repeat=3, min_size=0,
                      baseline=baseline, interrupt=intr, keep_on_interrupt=True,
                      run_seconds=Budget(None, clock=clock, interrupt=intr))
    assert len(records) == 5 and records.protocol["interrupted"] and records.protocol["rounds"] == rounds
    if rounds:
        assert len(fused) == call                 # no run started after the interrupt
        assert all(r.samples == [1.0] and not r.not_timed for r in records[1:]) and not records[0].not_timed
        assert all("1 of 3 timed runs: interrupted (Kernel -> Interrupt)" in r.warnings for r in records[1:])
    else:
        assert all(r.not_timed.startswith("not timed: interrupted") for r in records[1:])


def test_plans_are_kept_between_clicks(monkeypatch: pytest.MonkeyPatch) -> None:
    planned: list[int] = []
    plan = planning.plan

    def counted(program: Any, blocks: Any, min_size: int = 0, **kwargs: Any) -> Any:
        planned.append(len(program))
        return plan(program, blocks, min_size, **kwargs)

    monkeypatch.setattr(planning, "plan", counted)
    r = FuseResult(capture(TWO_BATCHES).batches, capture=capture(TWO_BATCHES), algorithms=["greedy"],
                   cost_models=["bohrium", "robinson"], compile_seconds=None, run_seconds=None)
    r.time(repeat=1)
    first = len(planned)
    assert first >= 2                              # both batches, per distinct partition
    r.time(repeat=1)
    assert len(planned) == first                   # the second click plans nothing again


@pytest.mark.parametrize("algorithm", ["greedy", "optimal"])
def test_compile_and_time_runs_the_partitions_shown_and_searches_none(monkeypatch: pytest.MonkeyPatch,
                                                                      algorithm: str) -> None:
    # the particles cell of issue 34: 32.7 s searching again, one row "compile budget spent
    # partitioning", although the explorer had shown that partition
    from fusionlab.partition import MergeCache

    # the merge cache keeps no search the budget cut: here it keeps none at all, so only the
    # partitions the explorer showed can spare the rows a search
    monkeypatch.setattr(MergeCache, "put", lambda self, key, result: None)
    cap = capture(SOURCE)
    r = FuseResult(cap.batches, capture=cap, algorithms=["greedy", "optimal"], cost_models=["bohrium", "robinson"],
                   compile_seconds=None, run_seconds=None).select(algorithm, "bohrium")
    shown = {e["cost_model"]: e["blocks"] for e in r.report()["partitions"] if e["algorithm"] == algorithm}

    def searched(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("Compile & time searched for a partition the explorer had shown")

    monkeypatch.setattr(planning, "partition", searched)
    records = r.time(repeat=1)
    assert [rec.not_timed for rec in records] == ["", "", ""]
    assert {e["cost_model"]: e["blocks"] for e in r.report()["partitions"] if e["algorithm"] == algorithm} == shown


def test_a_second_click_goes_on_where_planning_stopped(monkeypatch: pytest.MonkeyPatch) -> None:
    # planning is cut by the compile budget in the middle of a cell's batches (a counted step,
    # not a clock): the second click plans only the batches the first did not reach
    from fusionlab.support.budget import BudgetExceeded

    planned: list[int] = []
    plan = planning.plan
    stop = {"after": 1}

    def cut(program: Any, blocks: Any, min_size: int = 0, **kwargs: Any) -> Any:
        if stop["after"] is not None and len(planned) >= stop["after"]:
            raise BudgetExceeded("planning kernels", 30.0)
        planned.append(id(program))
        return plan(program, blocks, min_size, **kwargs)

    monkeypatch.setattr(planning, "plan", cut)
    cap = capture(TWO_BATCHES)
    r = FuseResult(cap.batches, capture=cap, algorithms=["greedy"], cost_models=["bohrium"], run_seconds=None)
    records = r.time(repeat=1)
    assert records[1].not_timed.startswith("not timed: compile budget")
    assert planned == [id(cap.batches[0])]
    stop["after"] = None
    records = r.time(repeat=1)
    assert not records[1].not_timed
    assert planned == [id(cap.batches[0]), id(cap.batches[1])]


def test_fuse_result_passes_its_run_budget() -> None:
    cap = capture(SOURCE)
    r = FuseResult(cap.batches, capture=cap, algorithms=["greedy"], cost_models=["bohrium"], run_seconds=0.0)
    r.time(repeat=3)
    rows = r.timings["records"]
    assert rows[0]["samples"] == 1               # NumPy's warm-up alone: a budget of 0 s
    assert rows[1]["not_timed"].startswith("not timed: the time budget of 0 s for the runs")
    assert r.timings["not_timed"] == 1 and r.timings["not_checked"] == 0


def _heat(iterations: int) -> Any:
    return capture("import numpy as np\nu = np.ones((40, 40))\nfor _ in range(%d):\n"
                   "    u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])\n"
                   % iterations)


def test_a_spent_budget_builds_no_graph_and_formats_each_instruction_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # LU at n = 200 spent its --budget in the capture; the exploration then formatted the
    # 80,000-instruction listing twice and started the WSP graph anyway (45 s past a 15 s budget)
    import fusionlab.explore.report as report

    built: list[int] = []
    formatted: list[int] = []
    graph, fmt = report.WSPGraph, report.format_instruction

    def counted_graph(program: Any, **kwargs: Any) -> Any:
        built.append(len(program))
        return graph(program, **kwargs)

    def counted_format(ins: Any, *args: Any) -> str:
        formatted.append(1)
        return fmt(ins, *args)

    monkeypatch.setattr(report, "WSPGraph", counted_graph)
    monkeypatch.setattr(report, "format_instruction", counted_format)
    cap = _heat(10)
    r = FuseResult(cap.batches, capture=cap)
    spent = Budget(0.0)
    assert r.compute(spent, first_only=True, first_by=spent.started) is False   # the listing first
    r.compute(spent)
    assert built == []
    assert len(formatted) == len(r.program)
    report_ = r.report()
    assert [e["status"] for e in report_["partitions"]] == ["budget"] * len(report_["partitions"])
    assert len(report_["program"]["instructions"]) == len(r.program)


def test_the_program_section_is_unchanged_by_formatting_once() -> None:
    from fusionlab.explore.report import get_program_data
    from fusionlab.ir.text import format_instruction, format_program

    for program in _heat(3).batches:
        data = get_program_data(program)
        assert data["text"] == format_program(program)
        assert [i["text"] for i in data["instructions"]] == [format_instruction(ins) for ins in program]


def test_compiling_does_not_spend_the_run_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    # LU's kernels take the compile budget (here a 100 s warm-up): the runs after it still fit
    clock = Clock()

    def compile_first(call: int) -> None:
        if call == 1:
            clock.now += 99.0

    _slow_driver(monkeypatch, clock, 1.0, compile_first)
    baseline, _ = _baseline(clock, 1.0)
    records = compare(capture(SOURCE), ["greedy"], ["bohrium"], repeat=3, min_size=0, baseline=baseline,
                      run_seconds=Budget(20.0, clock=clock))
    assert records[0].samples == [1.0, 1.0, 1.0] and records[1].samples == [1.0, 1.0, 1.0]
    assert not records[1].not_timed


def test_compile_and_time_reuses_the_explorers_graph(monkeypatch: pytest.MonkeyPatch) -> None:
    # LU at n = 100: the WSP graph alone took 26.5 s of the 30 s compile budget on a loaded
    # machine, built again by every click; now the explorer's graph (or the first click's) serves
    import fusionlab.analysis.wsp as wsp

    builds: list[int] = []
    build = wsp.WSPGraph._build

    def counted(self: Any, budget: Any) -> None:
        builds.append(len(self.program))
        build(self, budget)

    monkeypatch.setattr(wsp.WSPGraph, "_build", counted)
    cap = _heat(3)
    r = FuseResult(cap.batches, capture=cap, algorithms=["greedy"], cost_models=["bohrium", "robinson"],
                   run_seconds=None)
    r.compute()
    explorer = len(builds)
    assert explorer >= 1 and r.parts.graph is not None
    r.cache = type(r.cache)()                      # forget its partitions: the rows must partition
    records = r.time(repeat=1, cost_models=["robinson"])
    assert not records[1].not_timed
    # one graph per batch, in planning's block order (execute.plan builds its own), none to
    # partition the batch shown or to predict the run's time (before: three per batch)
    others = [len(b) for k, b in enumerate(cap.batches) if k != r.batch]
    planned = [len(b) for b in cap.batches]
    assert sorted(builds[explorer:]) == sorted(others + planned)
    first = len(builds)
    r.cache = type(r.cache)()
    r.time(repeat=1, cost_models=["robinson"])
    assert len(builds) == first                  # a second click builds none


def test_the_prediction_on_kept_graphs_is_predict_seconds() -> None:
    from fusionlab.costs.timemodel import load_figures, predict_seconds

    cap = capture(TWO_BATCHES)
    r = FuseResult(cap.batches, capture=cap, algorithms=["greedy"], cost_models=["bohrium"], run_seconds=None)
    rec = r.time(repeat=1)[1]
    assert len(r._pipeline.graphs) == len(cap.batches)   # computed on the kept graphs
    plans = r._pipeline.plans.values()
    blocks = [[list(bp.instructions) for bp in p.blocks] for p in sorted(plans, key=lambda p: cap.batches.index(p.program))]
    want = predict_seconds(cap.batches, blocks, load_figures(), runner.DEFAULT_MIN_SIZE,
                           opaque_seconds=cap.externals.seconds)
    assert rec.predicted_seconds == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("source", [
    "import numpy as np\nu = np.ones((20, 20))\nfor _ in range(4):\n"
    "    u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])\n",
    "import numpy as np\nn = 8\na = np.arange(64.0).reshape(8, 8) + 64 * np.eye(8)\n"
    "u = a.copy()\nl = np.eye(8)\nfor k in range(n - 1):\n    for i in range(k + 1, n):\n"
    "        l[i, k] = u[i, k] / u[k, k]\n        u[i, k:] -= l[i, k] * u[k, k:]\n",
])
@pytest.mark.parametrize("model", ["bohrium", "max_locality", "robinson"])
def test_greedy_cut_by_the_budget_goes_on_where_it_stopped(source: str, model: str) -> None:
    # a compile budget cut greedy after a counted number of checks (an injected clock that
    # ticks once per check); each later click goes on from its merges so far and ends with
    # greedy's own partition
    from fusionlab.partition import partition
    from fusionlab.pipeline import PipelineCaches, PipelineConfig, partition_batch

    cap = capture(source)
    batch = cap.batches[max(range(len(cap.batches)), key=lambda k: len(cap.batches[k]))]
    ticks = [0.0]

    def clock() -> float:
        ticks[0] += 1.0
        return ticks[0]

    from fusionlab.analysis.wsp import WSPGraph

    graph = WSPGraph(batch)
    want = partition(graph, "greedy", model, budget=Budget(None, clock=clock)).blocks
    whole = ticks[0]                               # the checks of an uncut run
    keep = PipelineCaches()   # the explorer's, kept between clicks (the partitions are not: each click's own)
    keep.graphs.put(batch, graph)
    clicks = 0
    while True:
        clicks += 1
        keep.merge = type(keep.merge)()
        got = partition_batch(batch, PipelineConfig("greedy", model, 0), keep, Budget(0.6 * whole, clock=clock))
        if not got.budget_cut:
            break
        assert clicks < 20, "no progress between clicks"
    assert clicks > 1 and got.blocks == want
