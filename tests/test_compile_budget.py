"""'Compile & time' within a compile budget: progress per kernel, interrupts between kernels,
rows that do not fit marked not timed, and the explorer usable afterwards (issue 13, student
cells). No test asserts a wall-clock time: budgets of 0 s and infinity, and stops injected
at a counted kernel, decide every outcome."""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from IPython.core.error import UsageError
from IPython.testing.globalipapp import get_ipython
from IPython.utils.capture import capture_output

from fusionlab.support.budget import Budget, Interrupt
from fusionlab.capture import capture
from fusionlab.pipeline import compare
from fusionlab.pipeline.compile_watch import CompileBudgetSpent, CompileWatch
from fusionlab.backend.numba.plan import KernelCache
from fusionlab.explore.jupyter import FuseResult
from fusionlab.explore.jupyter.explorer import Explorer
from fusionlab.explore.jupyter.timing import DEFAULT_COMPILE_SECONDS
from fusionlab.explore.viz.charts import timing_chart_svg
from fusionlab.explore.viz.listing import timing_table_html

ip = get_ipython()
ip.run_line_magic("load_ext", "fusionlab")

# four distinct kernels under singleton (one per instruction, arange too), one under greedy
SOURCE = "import numpy as np\nx = np.arange(64.0)\ny = np.sqrt(x) * 2.0\nz = y - x\n"


def _dispatcher(module: str) -> SimpleNamespace:
    return SimpleNamespace(py_func=SimpleNamespace(__module__=module), overloads={})


def _event(dispatcher: SimpleNamespace, start: bool) -> SimpleNamespace:
    return SimpleNamespace(data={"dispatcher": dispatcher}, is_start=start, is_end=not start)


def _compile(watch: CompileWatch, dispatcher: SimpleNamespace, succeeds: bool = True) -> None:
    """What Numba does around one compilation: a start event, an overload added, an end event."""
    watch.on_start(_event(dispatcher, True))
    if succeeds:
        dispatcher.overloads[len(dispatcher.overloads)] = object()
    watch.on_end(_event(dispatcher, False))


def test_the_watch_counts_fusionlab_kernels_and_stops_only_them() -> None:
    seen: list[int] = []
    watch = CompileWatch(Budget(None), on_kernel=lambda k, s: seen.append(k))
    for _ in range(3):
        _compile(watch, _dispatcher("fusionlab_kernel_abc"))
    _compile(watch, _dispatcher("numba.np.arraymath"))     # Numba's own helper: not counted
    assert watch.compiled == 3 and seen == [1, 2, 3]
    _compile(watch, _dispatcher("fusionlab_driver_d"), succeeds=False)  # a failed compile adds no overload
    assert watch.compiled == 3
    spent = CompileWatch(Budget(0.0))
    with pytest.raises(CompileBudgetSpent, match="compile budget of 0 s"):
        spent.on_start(_event(_dispatcher("fusionlab_kernel_abc"), True))
    spent.on_start(_event(_dispatcher("numba.core.base"), True))  # never stops Numba's own work
    intr = Interrupt()
    intr.pending = True
    with pytest.raises(KeyboardInterrupt):
        CompileWatch(Budget(None, interrupt=intr)).before_compile("fusionlab_kernel_x")


def test_no_compile_budget_times_every_row_and_reports_progress_per_kernel(tmp_path) -> None:
    calls: list[tuple[str, int, int]] = []
    records = compare(capture(SOURCE), ["singleton", "greedy"], ["bohrium"], repeat=1, min_size=0,
                      cache=KernelCache(directory=tmp_path), progress=lambda *a: calls.append(a),
                      compile_seconds=math.inf)
    assert [r.not_timed for r in records] == ["", "", ""]
    # every row timed: figures, not the NaN of a row not timed (their size is the machine's)
    assert all(len(r.samples) >= 1 and math.isfinite(r.median_seconds) and math.isfinite(r.speedup) for r in records)
    kernel_lines = [c for c in calls if "kernels ready" in c[0]]
    # a line per kernel compiled (singleton's, then greedy's), with the row count unchanged
    assert [c[0].split(": ")[1].split(" (")[0] for c in kernel_lines if c[0].startswith("singleton")] == \
        [f"{k} of 4 kernels ready" for k in (1, 2, 3, 4)]
    assert all(c[1] == 1 for c in kernel_lines if c[0].startswith("singleton"))
    assert calls[-1] == ("done", 3, 3)


def test_a_spent_budget_marks_rows_not_timed_and_keeps_numpy(tmp_path) -> None:
    records = compare(capture(SOURCE), ["singleton", "greedy"], ["bohrium", "robinson"], repeat=1, min_size=0,
                      cache=KernelCache(directory=tmp_path), compile_seconds=0.0)
    assert records[0].cost_model == "numpy" and not records[0].not_timed and math.isfinite(records[0].median_seconds)
    assert [r.not_timed.startswith("not timed: compile budget of 0 s spent") for r in records[1:]] == [True] * 4
    assert all(math.isnan(r.median_seconds) and math.isnan(r.speedup) for r in records[1:])
    # once spent, a row does not even build its WSP graph (seconds on a big batch)
    assert records[-1].not_timed == "not timed: compile budget of 0 s spent before this row"


def test_the_budget_stopping_mid_row_says_after_how_many_kernels(tmp_path, monkeypatch) -> None:
    # the budget "runs out" at the third fusionlab kernel: a counted stop, not a clock
    real = CompileWatch.before_compile
    count = {"n": 0}

    def stop_at_third(self: CompileWatch, module: str, lines: int = 0) -> bool:
        ours = real(self, module, lines)
        if ours and module.startswith("fusionlab_kernel_") and self.compiled >= 2:
            count["n"] += 1
            raise CompileBudgetSpent(5.0, self.compiled)
        return ours

    monkeypatch.setattr(CompileWatch, "before_compile", stop_at_third)
    cache = KernelCache(directory=tmp_path)
    records = compare(capture(SOURCE), ["singleton", "greedy"], ["bohrium"], repeat=1, min_size=0,
                      cache=cache, compile_seconds=5.0)
    single, greedy = records[1], records[2]
    assert single.not_timed == "not timed: compile budget of 5 s spent after 2 of 4 kernels"
    assert single.kernels == 4 and single.blocks >= 4 and math.isnan(single.median_seconds)
    # the next row has one kernel of its own: compiled as the first of its row (the stop
    # counts per row), it is timed
    assert greedy.not_timed == "" and math.isfinite(greedy.median_seconds) and count["n"] >= 1


def test_an_interrupt_between_kernels_keeps_the_rows_done(tmp_path) -> None:
    intr = Interrupt()

    def progress(label: str, done: int, total: int) -> None:
        if label.startswith("singleton / robinson") and "1 of" in label:
            intr.pending = True  # Kernel -> Interrupt once robinson's first kernel is compiled

    records = compare(capture(SOURCE), ["greedy", "singleton"], ["bohrium", "robinson"],
                      repeat=1, min_size=0, cache=KernelCache(directory=tmp_path), progress=progress,
                      compile_seconds=math.inf, interrupt=intr, keep_on_interrupt=True)
    assert [(r.cost_model, r.algorithm) for r in records] == [
        ("numpy", "eager"), ("bohrium", "greedy"), ("bohrium", "singleton"), ("robinson", "greedy"),
        ("robinson", "singleton")]
    assert [r.not_timed for r in records[:4]] == ["", "", "", ""]


def _fuse(line: str, cell: str) -> FuseResult:
    with capture_output():
        ip.run_cell_magic("fuse", line, cell)
    return ip.user_ns["_fuse"]


def test_the_magic_option_sets_the_budget_and_the_report_says_why_not_timed() -> None:
    result = _fuse("--compile-budget 0 --compare bohrium --algorithms linear,greedy", SOURCE + "s = float(z.sum())\n")
    assert result.compile_seconds == 0.0
    want = {k: ip.user_ns[k].copy() if isinstance(ip.user_ns[k], np.ndarray) else ip.user_ns[k]
            for k in ("x", "y", "z", "s")}
    records = result.time(repeat=1)
    assert [bool(r.not_timed) for r in records] == [False, True]
    timings = result.report()["timings"]
    assert timings["not_timed"] == 1 and timings["records"][1]["median_seconds"] is None
    assert timings["records"][1]["samples"] == 0
    assert "not timed: compile budget of 0 s" in timing_table_html(timings)
    assert timing_chart_svg(timings).startswith("<svg")
    for k, v in want.items():  # timing never changes the user's variables
        np.testing.assert_array_equal(ip.user_ns[k], v)
    plain: dict[str, Any] = {}
    exec(SOURCE + "s = float(z.sum())\n", plain)
    for k in want:
        np.testing.assert_array_equal(ip.user_ns[k], plain[k])
        assert type(ip.user_ns[k]) is type(plain[k])
    assert _fuse("", SOURCE).compile_seconds == DEFAULT_COMPILE_SECONDS


def test_fuse_config_sets_the_default_compile_budget() -> None:
    try:
        assert ip.run_line_magic("fuse_config", "--compile-budget 7")["compile_budget"] == 7.0
        assert _fuse("", SOURCE).compile_seconds == 7.0
        assert _fuse("--compile-budget inf", SOURCE).compile_seconds == math.inf
        with pytest.raises(UsageError, match="--compile-budget must be 0 or more"):
            ip.run_line_magic("fuse_config", "--compile-budget -1")
        with pytest.raises(UsageError, match="--compile-budget must be 0 or more"):
            ip.run_cell_magic("fuse", "--compile-budget -2", SOURCE)
    finally:
        ip.run_line_magic("fuse_config", "--reset")


def test_an_interrupt_leaves_the_explorer_usable(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("FUSIONLAB_CACHE", str(tmp_path))
    result = FuseResult(capture(SOURCE).batches, capture=capture(SOURCE), algorithms=["linear", "greedy"],
                        cost_models=["bohrium", "robinson"], compile_seconds=math.inf)
    shown: list[Any] = []
    explorer = Explorer(result, repeat=1, display=lambda obj, **kw: shown.append(obj))
    real = CompileWatch.before_compile

    def interrupted(self: CompileWatch, module: str, lines: int = 0) -> bool:
        if real(self, module, lines):
            raise KeyboardInterrupt  # Kernel -> Interrupt as the first kernel would compile
        return False

    monkeypatch.setattr(CompileWatch, "before_compile", interrupted)
    explorer.run_timing()                                 # returns: the interrupt is handled
    assert not explorer.time_button.disabled
    timings = result.report()["timings"]
    assert [r["not_timed"].startswith("not timed: interrupted") for r in timings["records"][1:]] == [True, True]
    assert "interrupted" in explorer.timing.value
    monkeypatch.setattr(CompileWatch, "before_compile", real)
    explorer.cost_model.value = "robinson"               # the controls still work
    assert result.selected == ("greedy", "robinson")
    explorer.run_timing()                                 # and timing again completes
    assert [r["not_timed"] for r in result.report()["timings"]["records"]] == ["", "", ""]
    assert explorer.progress_label.value == "done"


def test_timing_reuses_the_partitions_the_explorer_computed(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("FUSIONLAB_CACHE", str(tmp_path))
    cap = capture(SOURCE)
    result = FuseResult(cap.batches, capture=cap, algorithms=["greedy"], cost_models=["bohrium"],
                        compile_seconds=math.inf)
    result.compute()
    hits, misses = result.cache.hits, result.cache.misses
    records = result.time(repeat=1)
    # the partition shown is timed as it is (PipelineCaches.shown): no search, not even a merge-cache lookup
    assert records[1].not_timed == "" and result.cache.hits == hits and result.cache.misses == misses


def test_a_kernel_predicted_to_outlast_the_budget_is_not_started() -> None:
    # one compile is one call into LLVM and cannot be stopped: a 4,119-line kernel (an
    # element-by-element loop of 2,000 iterations fused) is refused before it starts
    from fusionlab.pipeline.compile_watch import SECONDS_PER_LINE, SMALL_KERNEL_LINES

    watch = CompileWatch(Budget(1e6))
    assert watch.before_compile("fusionlab_kernel_a", 4119)          # the budget has room
    tight = CompileWatch(Budget(30.0))
    assert tight.before_compile("fusionlab_kernel_a", SMALL_KERNEL_LINES)  # short kernels are always tried
    lines = int(31.0 / SECONDS_PER_LINE)
    with pytest.raises(CompileBudgetSpent, match=f"a kernel of {lines:,} lines would take about 31 s"):
        tight.before_compile("fusionlab_kernel_a", lines)
    # the rate seen so far counts: 10 s for 100 lines makes 500 lines 50 s
    tight.seconds, tight.lines = 10.0, 100
    assert tight.predict(500) == pytest.approx(50.0)
    with pytest.raises(CompileBudgetSpent):
        tight.before_compile("fusionlab_kernel_b", 500)


def test_a_second_click_goes_on_where_the_budget_stopped_the_first(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("FUSIONLAB_CACHE", str(tmp_path))
    cap = capture(SOURCE)
    result = FuseResult(cap.batches, capture=cap, algorithms=["singleton"], cost_models=["bohrium"],
                        compile_seconds=math.inf)
    real = CompileWatch.before_compile

    def stop_at_third(self: CompileWatch, module: str, lines: int = 0) -> bool:
        if real(self, module, lines) and module.startswith("fusionlab_kernel_") and self.compiled >= 2:
            raise CompileBudgetSpent(30.0, self.compiled)
        return module.startswith("fusionlab_")

    monkeypatch.setattr(CompileWatch, "before_compile", stop_at_third)
    first: list[str] = []
    assert result.time(repeat=1, progress=lambda label, *_: first.append(label))[1].not_timed.endswith(
        "after 2 of 4 kernels")
    monkeypatch.setattr(CompileWatch, "before_compile", real)
    imported: list[str] = []
    load = KernelCache._load

    def counted(self: KernelCache, stem: str, *args: Any, **kwargs: Any) -> Any:
        imported.append(stem)
        return load(self, stem, *args, **kwargs)

    monkeypatch.setattr(KernelCache, "_load", counted)
    second: list[str] = []
    assert result.time(repeat=1, progress=lambda label, *_: second.append(label))[1].not_timed == ""
    # the result keeps its kernels between clicks: none of the four is imported again
    assert not [stem for stem in imported if stem.startswith("k_")]
    ready = [label.split(": ")[1].split(" (")[0] for label in second if "kernels ready" in label]
    assert ready == ["3 of 4 kernels ready", "4 of 4 kernels ready"]  # the first two were kept
