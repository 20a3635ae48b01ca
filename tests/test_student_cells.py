"""Student cells under ``%%fuse`` (issue 13, the explorer on real cells): every cell of
``tests/data/student_cells/`` returns, its variables equal plain NumPy's, and every phase
after capture (reroll, the window, the WSP graph, dead writes, the partitions, the layout)
stops at its budget and says so in a notice.

No test reads the wall clock: the cells run at the sizes of their ``# small:`` line with
capture bounded by counted instructions, and the phase budgets are budgets of 0 s or
budgets on an injected clock that advances one "second" per reading."""

from __future__ import annotations

import contextlib
import io
import re
import types
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from fusionlab import parse
from fusionlab.support.budget import Budget
from fusionlab.capture import CaptureBudget, capture
from fusionlab.explore.jupyter import FuseResult
from fusionlab.explore.report import ReportParts, rewrite_notices
from fusionlab.passes.reroll import RerollRefusal, reroll
from fusionlab.passes.rewrites import RewriteKind
from fusionlab.pipeline import PipelineConfig, prepare
from clocks import Ticks

CELLS = Path(__file__).parent / "data" / "student_cells"
NAMES = sorted(p.stem for p in CELLS.glob("*.py"))
# counted steps: capture stops after this many instructions, the explorer shows this many
FUSE_LINE = "--capture-instructions 400 --window 150 --algorithms singleton,linear,greedy --compare bohrium " \
            "--exact-time 0 --no-explorer"


def cell_source(name: str) -> str:
    """The cell at the sizes of its ``# small:`` line (its upper-case constants replaced)."""
    text = (CELLS / f"{name}.py").read_text()
    found = re.search(r"^# small:(.*)$", text, re.M)
    assert found is not None, f"{name}: no '# small:' line"
    for assignment in found.group(1).split():
        key, value = assignment.split("=")
        text, n = re.subn(rf"^{key} = .*$", f"{key} = {value}", text, count=1, flags=re.M)
        assert n == 1, f"{name}: no line '{key} = ...' to make small"
    return text


def _plain(source: str) -> tuple[dict[str, Any], type | None]:
    ns: dict[str, Any] = {}
    error = None
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            exec(compile(source, "cell", "exec"), ns)
        except Exception as exc:  # noqa: BLE001  (a cell raises on purpose)
            error = type(exc)
    return ns, error


def _same(got: Any, want: Any, where: str) -> None:
    """``got`` is what plain NumPy gave: the same type and value (arrays bit for bit)."""
    if isinstance(want, (types.ModuleType, types.FunctionType, type)):
        return
    assert type(got) is type(want), f"{where}: {type(got).__name__} is not {type(want).__name__}"
    if isinstance(want, np.ndarray):
        assert got.dtype == want.dtype and got.shape == want.shape, where
        assert np.array_equal(got, want, equal_nan=True), where
    elif isinstance(want, (list, tuple)):
        assert len(got) == len(want), where
        for k, (g, w) in enumerate(zip(got, want)):
            _same(g, w, f"{where}[{k}]")
    elif isinstance(want, dict):
        assert got.keys() == want.keys(), where
        for k in want:
            _same(got[k], want[k], f"{where}[{k!r}]")
    elif isinstance(want, np.random.Generator):
        assert got.bit_generator.state == want.bit_generator.state, where
    elif isinstance(want, (int, float, complex, str, bool, np.generic)) or want is None:
        assert got == want or (got != got and want != want), f"{where}: {got!r} != {want!r}"


@pytest.fixture(scope="module")
def ip() -> Any:
    from IPython.testing.globalipapp import get_ipython

    shell = get_ipython()
    shell.run_line_magic("load_ext", "fusionlab")
    return shell


def test_the_corpus_has_25_cells_each_saying_what_it_stresses() -> None:
    assert len(NAMES) >= 25
    for name in NAMES:
        head = (CELLS / f"{name}.py").read_text().splitlines()[0]
        assert head.startswith("# stresses: "), name


@pytest.mark.parametrize("name", NAMES)
def test_a_student_cell_returns_with_plain_numpys_variables(ip: Any, name: str) -> None:
    from IPython.utils.capture import capture_output

    source = cell_source(name)
    want, error = _plain(source)
    for k in want:
        ip.user_ns.pop(k, None)
    ip.user_ns.pop("_fuse", None)
    raised = None
    with capture_output() as out:
        try:
            ip.run_cell_magic("fuse", FUSE_LINE, source)
        except Exception as exc:  # noqa: BLE001
            raised = type(exc)
    assert raised is error, out.stderr
    assert "Traceback" not in out.stderr and "Error" not in out.stderr.replace("ValueError", ""), out.stderr
    for k, w in want.items():
        if k.startswith("__") or k in ("fig", "ax"):   # matplotlib's objects: compared by type only
            continue
        assert k in ip.user_ns, f"{name}: {k} missing"
        _same(ip.user_ns[k], w, f"{name}: {k}")
    res = ip.user_ns.get("_fuse")
    if res is None:   # nothing recorded (the cell raised before any array instruction)
        return
    # counted steps bound what was recorded and what is explored
    recorded = sum(len(b) for b in res.capture.batches)
    assert recorded <= 400 + 16
    assert all(len(b) <= 150 for b in res.batches)
    report = res.report()
    assert report["status"]["phase"] in ("done", "pending")
    if any(n > 150 for n in res.batch_lengths):
        assert any(n["kind"] == "window" for n in report["notices"])


# -- each phase stops at its budget and says so -----------------------------------------


def _unrolled(count: int, tmp: str = "t", factor: int = 2, declare_a: bool = True) -> str:
    """A Python loop over the rows of ``a`` as capture records it: ``count`` iterations."""
    lines = ["ARRAY a float64[%d,3]" % (count + 1), "ARRAY r float64[3]"] if declare_a else []
    lines += [f"ARRAY {tmp}{k} float64[3]" for k in range(count)]
    for k in range(count):
        lines += [f"MULTIPLY {tmp}{k}, r, {factor}", f"ADD a[{k + 1}], a[{k + 1}], {tmp}{k}", f"DEL {tmp}{k}"]
    return "\n".join(lines)


def test_reroll_stops_at_its_budget_keeping_what_it_rerolled() -> None:
    p = parse(_unrolled(40) + "\nSYNC a\n" + _unrolled(40, "u", 3, declare_a=False))
    whole = reroll(p)
    assert len(whole.runs) == 2 and len(whole.program) == 7
    spent = reroll(p, budget=Budget(0.0))
    assert spent.program is p and [r.reason for r in spent.refusals] == [RerollRefusal.TIME_BUDGET]
    # an injected clock: the budget runs out after a few readings, between the two runs
    for seconds in range(2, 40):
        cut = reroll(p, budget=Budget(float(seconds), clock=Ticks()))
        if cut.runs and any(r.reason is RerollRefusal.TIME_BUDGET for r in cut.refusals):
            break
    else:
        pytest.fail("no budget cut rerolling between its runs")
    assert len(cut.runs) == 1 and cut.runs[0].start == 0
    assert len(cut.program) == 3 + 1 + 120       # the first run rerolled, the rest as captured
    [stop] = [r for r in cut.rewrites() if r.kind is RewriteKind.BUDGET_CUT]
    # at the second run's first instruction (the first run's 120, then the SYNC), from 0
    assert (stop.batch, stop.instruction) == (0, 121) and "rerolling stopped at its time budget" in stop.describe()


def test_the_explorer_says_rerolling_stopped_and_explores_the_rest_as_captured() -> None:
    p = parse(_unrolled(30))
    res = FuseResult.from_program(p, algorithms=["greedy"], cost_models=["bohrium"], reroll_budget=Budget(0.0))
    assert len(res.program) == len(p)
    [notice] = [n for n in res.report()["notices"] if "rerolling stopped" in n["detail"]]
    assert notice["kind"] == "reroll" and "--no-reroll" in notice["detail"]
    rerolled = FuseResult.from_program(p, algorithms=["greedy"], cost_models=["bohrium"])
    assert len(rerolled.program) == 3 and not any("stopped" in n.get("detail", "") for n in rerolled.report()["notices"])


def test_a_long_batch_is_explored_through_a_window_with_a_notice() -> None:
    p = parse(_unrolled(50))
    res = FuseResult.from_program(p, algorithms=["singleton", "greedy"], cost_models=["bohrium"], reroll=False,
                                  window=20)
    assert len(res.program) == 20 and res.batch_lengths == [150]
    assert res.program.instructions == p.instructions[:20]
    [notice] = [n for n in res.report()["notices"] if n["kind"] == "window"]
    assert "150 instructions" in notice["message"] and "first 20" in notice["message"]
    blocks = res.partitions[("singleton", "bohrium")].blocks
    assert sorted(i for b in blocks for i in b) == list(range(20))   # the partition covers the window
    whole = FuseResult.from_program(p, algorithms=["greedy"], cost_models=["bohrium"], reroll=False, window=None)
    assert len(whole.program) == 150 and not [n for n in whole.report()["notices"] if n["kind"] == "window"]
    with pytest.raises(ValueError):
        FuseResult.from_program(p, window=0)


def test_the_wsp_graph_stops_at_its_budget_with_a_notice() -> None:
    p = parse(_unrolled(20))
    parts = ReportParts.of(p, budget=Budget(0.0))
    assert parts.graph is None
    assert "WSP graph" in parts.notices[0]["message"] and parts.notices[0]["kind"] == "budget"
    res = FuseResult.from_program(p, algorithms=["greedy"], cost_models=["bohrium"], reroll=False)
    res.compute(Budget(0.0))
    assert res.parts.entries[("greedy", "bohrium")]["status"] == "budget"
    assert any("WSP graph" in n["message"] for n in res.report()["notices"])


def test_dead_writes_stop_at_their_budget_with_a_notice() -> None:
    p = parse("ARRAY a float64[8]\nCOPY a, 0\nCOPY a, 1.0\nSYNC a")
    assert rewrite_notices(prepare(p, PipelineConfig()))[0]["kind"] == "rewrite"
    [cut] = rewrite_notices(prepare(p, PipelineConfig(), Budget(0.0)))
    assert cut["kind"] == "budget" and "dead writes" in cut["message"]


def test_the_partitions_stop_at_the_budget_and_say_so() -> None:
    p = parse(_unrolled(20))
    res = FuseResult.from_program(p, algorithms=["singleton", "greedy", "optimal"], cost_models=["bohrium"],
                                  reroll=False)
    ticks = Ticks()
    res.compute(Budget(60.0, clock=ticks))   # the graph and a few partitions, then the injected clock runs out
    entries = res.report()["partitions"]
    statuses = {e["algorithm"]: e["status"] for e in entries}
    assert statuses["singleton"] == "done"
    assert "budget" in statuses.values() or res.report()["status"]["complete"]
    assert ticks.now > 0


def test_the_layout_stops_at_its_budget_with_a_note() -> None:
    res = FuseResult.from_program(parse(_unrolled(3)), algorithms=["greedy"], cost_models=["bohrium"])
    svg, note = res.graph_view(Budget(0.0))
    assert svg is None and "time budget ran out" in note


def test_the_text_listing_is_paginated() -> None:
    from fusionlab.explore.jupyter.session import TEXT_LINES

    res = FuseResult.from_program(parse(_unrolled(60)), algorithms=["singleton"], cost_models=["bohrium"],
                                  reroll=False)
    text = res.text()
    assert len(text.splitlines()) < TEXT_LINES + 20 and "more lines" in text


def test_capture_stops_at_counted_instructions_with_a_notice(ip: Any) -> None:
    source = cell_source("inc_tiny_100k")
    res = capture(source, {}, budget=CaptureBudget(instructions=100))
    assert res.stopped is not None and sum(len(b) for b in res.batches) <= 102
    assert res.namespace["x"].tolist() == _plain(source)[0]["x"].tolist()


def test_the_drawn_fuse_preventing_edges_stop_at_the_budget_with_a_notice() -> None:
    from fusionlab.analysis.wsp import WSPGraph

    p = parse('ARRAY a float64[8]\nARRAY b float64[8]\nCOPY a, 1.0\nOPAQUE b, a, name="np.sort"\n'
              'ADD a, a, b\nSYNC a')
    whole = ReportParts.of(p)
    assert whole.graph_data["forbidden"] and not [n for n in whole.notices if n["kind"] == "budget"]
    cut = ReportParts.of(p, graph=WSPGraph(p), budget=Budget(0.0))
    assert cut.graph is not None and cut.graph_data["forbidden"] == []
    assert cut.graph_data["dependencies"] == whole.graph_data["dependencies"]
    assert any("fuse-preventing edges" in n["message"] for n in cut.notices if n["kind"] == "budget")


def test_thousands_of_batches_are_listed_once_per_kind_in_the_widget() -> None:
    from fusionlab.ir.examples import fig3

    few = FuseResult([fig3() for _ in range(3)], algorithms=["greedy"], cost_models=["bohrium"])
    assert len(few.widgets(show=False).batch.options) == 3
    many = FuseResult([fig3() for _ in range(60)] + [parse(_unrolled(2))], algorithms=["greedy"],
                      cost_models=["bohrium"], reroll=False)
    options = many.widgets(show=False).batch.options
    assert [k for _, k in options] == [0, 60]
    assert "and 59 more batches like it" in options[0][0]


def test_the_report_carries_the_batch_menu_the_extension_lists() -> None:
    # a float appended per iteration: 5,001 batches, nearly all alike (the JupyterLab
    # extension listed every one); the menu is decided once, in the report's data
    from fusionlab.ir.examples import fig3
    from fusionlab.explore.report import BATCHES_LISTED, validate_report

    many = FuseResult([fig3() for _ in range(5000)] + [parse(_unrolled(2))], algorithms=["greedy"],
                      cost_models=["bohrium"], reroll=False)
    report = many.report()
    validate_report(report)
    menu = report["batch_menu"]
    assert [(m["index"], m["alike"]) for m in menu] == [(0, 4999), (5000, 0)]
    assert menu[0]["label"] == f"batch 1: {len(fig3())} instructions (and 4999 more batches like it)"
    # the ipywidgets view lists the same entries
    assert [label for label, _ in many.widgets(show=False).batch.options] == [m["label"] for m in menu]
    # a few batches: every one, none summarised
    few = FuseResult([fig3() for _ in range(BATCHES_LISTED)], algorithms=["greedy"], cost_models=["bohrium"])
    assert [m["index"] for m in few.report()["batch_menu"]] == list(range(BATCHES_LISTED))
    assert all(m["alike"] == 0 for m in few.report()["batch_menu"])
