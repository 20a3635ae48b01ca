"""The Numba backend against the reference executor: contraction, fallbacks, workloads."""

from __future__ import annotations

import io
import statistics
import warnings
import dataclasses
from contextlib import redirect_stdout

import numpy as np
import pytest
from hypothesis import given, settings

from fusionlab import parse
from fusionlab.capture import capture
from fusionlab.backend.numba.codegen import get_kernel
from fusionlab.backend.numba.plan import KernelCache, NumpyRuns, Plan, plan, run_plan
from fusionlab.runtime.reference import Externals, Storage, run_reference
from fusionlab.pipeline.comparison import compare, format_records
from fusionlab.pipeline.runner import run
from fusionlab.costs.timemodel import default_figures
from fusionlab.workloads import WORKLOADS

from test_capture import numpy_sources

CACHE = KernelCache()   # one per test session: blocks with the same code compile once

FIG1 = parse("""
ARRAY A float64[10000]
ARRAY B float64[10000]
ARRAY T float64[10000]
MULTIPLY T, B, A
ADD A, A, T
DEL T
SYNC A
""")


class RecordingStorage(Storage):
    """Storage that remembers which bases were ever allocated."""

    def __init__(self, inputs=None):
        super().__init__(inputs)
        self.allocated: set[str] = set()

    def ensure(self, base, zero=True):
        self.allocated.add(base.name)
        return super().ensure(base, zero)


def test_contracted_temporary_is_never_allocated():
    kernel = get_kernel(FIG1, [0, 1, 2, 3])
    assert kernel.contracted == ("T",)
    assert [v.base.name for v in kernel.arguments] == ["B", "A"]
    assert "T = B[i0] * A[i0]  # 1: MULTIPLY T, B, A" in kernel.source
    assert "A[i0] = A[i0] + T  # 2: ADD A, A, T" in kernel.source
    inputs = {"A": np.arange(10000.0), "B": np.full(10000, 2.0)}
    storage = RecordingStorage(inputs)
    out = run_plan(plan(FIG1, [[0, 1, 2, 3]], min_size=0), storage, Externals(), CACHE)
    assert "T" not in storage.allocated and storage.allocated == {"A", "B"}
    np.testing.assert_array_equal(out["A"], run_reference(FIG1, inputs=inputs)["A"])
    # the singleton partition has to allocate T
    singles = RecordingStorage(inputs)
    run_plan(plan(FIG1, [[0], [1], [2], [3]], min_size=0), singles, Externals(), CACHE)
    assert "T" in singles.allocated


def test_small_blocks_run_serially_or_with_numpy_and_say_why():
    # fused but small: a serial kernel (no thread pool to wake), which still contracts T
    fused = plan(FIG1, [[0, 1, 2, 3]], min_size=1 << 20).blocks[0]
    assert fused.kernel is not None and fused.kernel.contracted == ("T",)
    assert "parallel=False" in fused.kernel.source and "prange" not in fused.kernel.source
    assert fused.reason.startswith("serial: ") and "min_size=1048576" in fused.reason
    # the same block at or above min_size: a parallel kernel, another cache entry
    assert "parallel=True" in plan(FIG1, [[0, 1, 2, 3]], min_size=0).blocks[0].kernel.source
    assert plan(FIG1, [[0, 1, 2, 3]], min_size=0).blocks[0].kernel.key != fused.kernel.key
    # one instruction: nothing to fuse; block by block NumPy runs it or its serial kernel,
    # whichever the machine's figures say is the cheaper call from Python
    numpy_wins = dataclasses.replace(default_figures(), launch={**default_figures().launch, "numpy": 0.1e-6})
    singles = plan(FIG1, [[0], [1], [2], [3]], min_size=1 << 20, figures=numpy_wins).blocks
    computing = [bp for bp in singles if bp.numpy is not NumpyRuns.NOTHING_TO_COMPUTE]
    assert len(computing) == 2 and all(bp.numpy is NumpyRuns.CHEAPER for bp in computing)
    assert computing and all(bp.kernel is None and bp.reason.startswith("NumPy: one instruction on 10000 elements")
                             and "against NumPy’s 0.1 µs" in bp.reason for bp in computing)
    # ... block by block; the run's driver calls their serial kernels instead
    assert all(bp.serial is not None and "parallel=False" in bp.serial.source and bp.compiled is bp.serial
               for bp in computing)
    # the kernel's call is the cheaper one, but FIG1's two kernels would each be compiled for
    # one call: NumPy runs them (a compile costs about 0.3 s, the call saves microseconds)
    once = plan(FIG1, [[0], [1], [2], [3]], min_size=1 << 20, figures=default_figures()).blocks
    once = [bp for bp in once if bp.numpy is not NumpyRuns.NOTHING_TO_COMPUTE]
    assert len(once) == 2 and all(bp.numpy is NumpyRuns.ONE_CALL for bp in once)
    assert len(once) == 2 and all(bp.kernel is None and bp.serial is not None and bp.reason.startswith(
        "NumPy: one instruction on 10000 elements") and "compiled for this one call" in bp.reason for bp in once)
    # a kernel several blocks call (the views' offsets are its arguments) is compiled once
    twice = parse("ARRAY A float64[200]\nARRAY B float64[200]\nADD A[10:100], A[10:100], B[10:100]\n"
                  "ADD A[110:200], A[110:200], B[110:200]\nSYNC A")
    kernel_wins = plan(twice, [[0], [1], [2]], min_size=1 << 20, figures=default_figures()).blocks
    chosen = [bp for bp in kernel_wins if bp.instructions != (2,)]
    assert len(chosen) == 2 and chosen[0].kernel.key == chosen[1].kernel.key
    assert all(bp.kernel is not None and bp.serial is None and "parallel=False" in bp.kernel.source
               and bp.reason.startswith("serial kernel: one instruction") and "against NumPy’s 6.0 µs" in bp.reason
               for bp in chosen)
    inputs = {"A": np.arange(200.0), "B": np.full(200, 2.0)}
    out = run_plan(plan(twice, [[0], [1], [2]], min_size=1 << 20), Storage(inputs), Externals(), CACHE)
    np.testing.assert_array_equal(out["A"], np.arange(200.0) + np.where(np.arange(200) % 100 >= 10, 2.0, 0.0))
    for figures in (numpy_wins, default_figures()):   # either way NumPy's values
        inputs = {"A": np.arange(10000.0), "B": np.full(10000, 2.0)}
        out = run_plan(plan(FIG1, [[0], [1], [2], [3]], min_size=1 << 20, figures=figures), Storage(inputs),
                       Externals(), CACHE)
        np.testing.assert_array_equal(out["A"], run_reference(FIG1, inputs=inputs)["A"])
    # and the serial kernel computes what NumPy does
    inputs = {"A": np.arange(10000.0), "B": np.full(10000, 2.0)}
    out = run_plan(plan(FIG1, [[0, 1, 2, 3]], min_size=1 << 20), Storage(inputs), Externals(), CACHE)
    np.testing.assert_array_equal(out["A"], run_reference(FIG1, inputs=inputs)["A"])


def test_a_block_numba_rejects_falls_back_with_a_warning(monkeypatch):
    import fusionlab.backend.numba.plan as nb

    good = plan(FIG1, [[0, 1, 2, 3]], min_size=0).blocks[0]
    broken = good.kernel.__class__(
        good.kernel.source.replace("A[i0] + T", "A[i0] + undefined_name"), good.kernel.arguments,
        good.kernel.extents, good.kernel.contracted, good.kernel.instructions, good.kernel.signature + "broken",
    )
    inputs = {"A": np.arange(10000.0), "B": np.full(10000, 2.0)}
    cache = KernelCache(directory=CACHE.directory)
    with pytest.warns(RuntimeWarning, match=r"block \[1, 2, 3, 4\]: Numba could not compile it"):
        out = run_plan(Plan(FIG1, (nb.BlockPlan(good.instructions, broken),)), Storage(inputs), Externals(), cache)
    np.testing.assert_array_equal(out["A"], run_reference(FIG1, inputs=inputs)["A"])
    assert broken.key in cache.failed


@pytest.mark.parametrize("name", list(WORKLOADS))
def test_workloads_under_fused_kernels_equal_the_reference(name):
    # block by block here; tests/test_driver.py runs the same under the run's driver
    with redirect_stdout(io.StringIO()):
        cap = capture(WORKLOADS[name].script("tiny"), {})
    # min_size=0: every fused block a parallel kernel; 2**30: a serial kernel
    for algorithm, min_size in (("linear", 0), ("greedy", 0), ("greedy", 1 << 30)):
        with warnings.catch_warnings():
            warnings.simplefilter("error")   # no block may fail to compile
            r = run(cap, algorithm, check=True, cache=CACHE, min_size=min_size, driver="blocks")
        assert r.max_abs_error <= 1e-9, (algorithm, min_size, r.max_abs_error)
        assert r.kernels >= 1, (algorithm, min_size)


@pytest.mark.parametrize("name", ["fig3", "heat_equation", "rosenbrock", "fig1_loops"])
def test_every_algorithm_runs_fused(name):
    with redirect_stdout(io.StringIO()):
        cap = capture(WORKLOADS[name].script("tiny"), {})
    for algorithm in ("singleton", "unintrusive", "optimal", "ilp"):
        r = run(cap, algorithm, check=True, cache=CACHE, min_size=0)
        assert r.max_abs_error <= 1e-9, (algorithm, r.max_abs_error)


@pytest.mark.parametrize("min_size", [0, 1 << 30], ids=["parallel", "serial"])
@settings(max_examples=15, deadline=None)
@given(source=numpy_sources())
def test_random_programs_under_fused_kernels(source, min_size):
    cap = capture(source, {})
    r = run(cap, "greedy", check=True, cache=CACHE, min_size=min_size, driver="blocks")
    assert r.max_abs_error <= 1e-9


def test_compare_has_numpy_first_and_a_row_per_choice():
    with redirect_stdout(io.StringIO()):
        cap = capture(WORKLOADS["fig1_loops"].script("tiny"), {})
    records = compare(cap, ["linear", "greedy"], ["bohrium", "max_contract"], repeat=2, cache=CACHE, min_size=0)
    assert [(r.cost_model, r.algorithm) for r in records] == [
        ("numpy", "eager"), ("bohrium", "linear"), ("bohrium", "greedy"), ("max_contract", "linear"),
        ("max_contract", "greedy"),
    ]
    assert all(r.max_abs_error <= 1e-9 for r in records[1:])
    # structure only (tests never judge speed): a minimum is never above its median
    assert all(0 < r.min_seconds and max(r.min_seconds, r.median_seconds) == r.median_seconds for r in records)
    table = format_records(records)
    same = [r for r in records if r.same_kernels_as]   # rows with an earlier row's kernels: a line each below
    lines = table.splitlines()
    assert lines[0].startswith("cost model") and len(lines[2:2 + len(records)]) == len(records)
    assert all(f"* {r.label}: the same kernels as {r.same_kernels_as}" in table for r in same)
    assert lines[-1 - len(same)].startswith("2 interleaved rounds (order rotated each round)")
    # the explorer's fields: quartiles, spread, raw samples, threads, busy, warnings
    import numba

    for r in records:
        assert len(r.samples) == 2 and r.median_seconds == pytest.approx(float(np.median(r.samples)))
        # the quartiles are the samples' own (statistics.quantiles, inclusive), whatever the times are
        q1, _, q3 = statistics.quantiles(r.samples, n=4, method="inclusive")
        assert (r.q1_seconds, r.q3_seconds) == (pytest.approx(q1), pytest.approx(q3))
        assert r.spread == pytest.approx((r.q3_seconds - r.q1_seconds) / r.median_seconds)
        assert isinstance(r.busy, bool) and isinstance(r.warnings, list)
        assert (r.threads == 0) == (r.cost_model == "numpy") and r.threads <= numba.config.NUMBA_NUM_THREADS
        d = r.to_dict()
        assert {"q1_seconds", "q3_seconds", "spread", "samples", "threads", "busy", "warnings",
                "median_seconds", "max_abs_error", "fallbacks"} <= set(d)


def test_shifted_views_of_one_base_are_one_argument():
    p = parse("""
ARRAY G float64[40, 50]
ARRAY W float64[38, 48]
ADD W, G[:-2, 1:-1], G[2:, 1:-1]
ADD W, W, G[1:-1, :-2]
MULTIPLY W, W, G[1:-1, 2:]
SYNC W
""")
    k = get_kernel(p, [0, 1, 2, 3])
    assert [v.base.name for v in k.arguments] == ["G", "W"] and k.arguments[0] == p.bases[0].view()
    assert "G_row = G[i0]" in k.source
    # W is written three times: it lives in a local and is stored once
    assert "W_w = W_w + G_row2[i1]  # 2: ADD W, W, G[1:-1, :-2]" in k.source and "G_row1 = G[i0 + o1]" in k.source
    # the offsets are unsigned arguments (index arithmetic without negative-index checks;
    # shifted blocks share the kernel): G's columns from 1, its rows from 2 and 1, columns from 2
    assert "def kernel(G, W, n0, n1, o0, o1, o2, o3):" in k.source and k.offsets == (1, 2, 1, 2) and k.source.count("W_row[i1] =") == 1
    inputs = {"G": np.random.default_rng(0).random((40, 50))}
    out = run_plan(plan(p, [[0, 1, 2, 3]], min_size=0), Storage(inputs), Externals(), CACHE)
    np.testing.assert_allclose(out["W"], run_reference(p, inputs=inputs)["W"], rtol=1e-15)


def test_synced_values_do_not_change_when_the_base_is_written_later():
    # two batches sharing one storage: the first syncs A without a copy, the second writes A
    first_batch = parse("ARRAY A float64[5000]\nRANGE A\nSYNC A")
    second_batch = parse("ARRAY A float64[5000]\nADD A, A, 1.0\nSYNC A")
    storage = Storage()
    first = run_plan(plan(first_batch, [[0, 1]], min_size=0), storage, Externals(), CACHE)["A"]
    kept = first.copy()
    second = run_plan(plan(second_batch, [[0], [1]], min_size=0), storage, Externals(), CACHE)
    np.testing.assert_array_equal(first, kept)   # copied on write, not overwritten
    np.testing.assert_array_equal(second["A"], kept + 1.0)


def test_recorded_random_values_are_lent_and_never_written():
    with redirect_stdout(io.StringIO()):
        cap = capture("""
import numpy as np
rng = np.random.default_rng(1)
for i in range(3):
    x = rng.random(6000)
    s = float((x * 2.0).sum())
    x += 1.0
    t = float(x.sum())
""", {})
    before = {k: v.copy() for k, v in cap.externals.arrays.items()}
    r = run(cap, "greedy", check=True, cache=CACHE, min_size=0)
    assert r.max_abs_error <= 1e-9
    assert any(b.bind for p in r.plans for b in p.blocks)
    for k, v in before.items():
        np.testing.assert_array_equal(cap.externals.arrays[k], v)


def test_lent_draws_are_never_copied(monkeypatch):
    # a block that is only its draws (Rosenbrock's first) as well as one with a kernel
    import fusionlab.backend.numba.plan as nb

    with redirect_stdout(io.StringIO()):
        cap = capture(WORKLOADS["rosenbrock"].script("tiny"), {})
    r = run(cap, "greedy", cache=CACHE, min_size=0)
    blocks = [b for p in r.plans for b in p.blocks if b.bind]
    assert blocks and all(len(b.lend) == len(b.bind) for b in blocks)
    copied = []
    real = nb.execute_instruction

    def recording(ins, *args):
        if ins.opcode.name == "RANDOM":
            copied.append(ins)
        return real(ins, *args)

    monkeypatch.setattr(nb, "execute_instruction", recording)
    storage = Storage(cap.inputs)
    for p in r.plans:
        run_plan(p, storage, cap.externals, CACHE)
    assert copied == []


def test_freed_memory_is_reused_and_results_stay_right():
    with redirect_stdout(io.StringIO()):
        cap = capture(WORKLOADS["leibnitz_pi"].script("tiny").replace("n=256", "n=20000"), {})
    storage = Storage(cap.inputs)
    from fusionlab.pipeline.runner import run_config
    from fusionlab.pipeline import Pass, plans as plan_batches
    # every array kept until its DEL as captured (none freed early, fusionlab.passes.deadbases: k
    # would then never be allocated), so each iteration's k is freed in the next batch
    plans = plan_batches(cap.batches, run_config("greedy", "bohrium", 0, reroll=False).without(Pass.FREE_EARLY)).plans
    for p in plans:
        run_plan(p, storage, cap.externals, CACHE)
    assert storage.pool   # k of an earlier iteration, kept for the next
    r = run(cap, "greedy", check=True, cache=CACHE, min_size=0)
    assert r.max_abs_error <= 1e-9


def test_compare_sets_the_time_models_prediction_beside_each_measured_run():
    """Issue 16: every fused record carries what the ``time`` model predicts for exactly the
    partition it timed (this machine's calibration, or the defaults); NumPy's row none."""
    from fusionlab.passes.deadbases import free_early
    from fusionlab.partition import partition as partition_of
    from fusionlab.costs.timemodel import load_figures, predict_seconds

    with redirect_stdout(io.StringIO()):
        cap = capture(WORKLOADS["fig1_loops"].script("tiny"), {})
    records = compare(cap, ["linear", "greedy"], ["bohrium"], repeat=1, cache=CACHE, min_size=0)
    assert records[0].predicted_seconds is None
    # the rows partition the batches with their arrays freed early (fusionlab.passes.deadbases)
    batches = free_early(cap.batches, set(cap.inputs)).batches
    for r in records[1:]:
        blocks = [partition_of(b, r.algorithm, "bohrium").blocks for b in batches]
        want = predict_seconds(batches, blocks, load_figures(), 0, opaque_seconds=cap.externals.seconds)
        # the time model's figure for this partition, computed from the calibration: no clock read
        assert r.predicted_seconds == pytest.approx(want)
        assert r.to_dict()["predicted_seconds"] == r.predicted_seconds


def test_why_numpy_runs_a_block_is_a_type_not_a_message():
    # a contraction alone is NumPy's own call (a library kernel, not a fallback); SYNCs and
    # DELs alone have nothing to compute; the run says what called the kernels as a type
    from fusionlab.backend.numba.driver import Runs

    cap = capture("import numpy as np\na = np.arange(16.0).reshape(4, 4)\nc = a @ a\nd = c + 1.0\n", {})
    r = run(cap, "singleton", check=True, cache=CACHE, min_size=0, driver="blocks")
    kinds = {bp.numpy for p in r.plans for bp in p.blocks}
    assert NumpyRuns.LIBRARY_CALL in kinds and NumpyRuns.NOTHING_TO_COMPUTE in kinds, kinds
    assert all((bp.kernel is None) == (bp.numpy is not None) for p in r.plans for bp in p.blocks)
    assert len(r.library_kernels) == 1 and r.fallbacks == [], (r.library_kernels, r.fallbacks)
    assert r.ran is Runs.BLOCKS and not r.ran.driven and r.driver.startswith(Runs.BLOCKS.value)
    # a block NumPy runs sends the whole run block by block, even when a driver is asked for
    assert run(cap, "singleton", cache=CACHE, min_size=0, driver="python").ran is Runs.BLOCKS
    plain = capture("import numpy as np\na = np.arange(8.0)\nb = a * 2.0 + 1.0\n", {})
    driven = run(plain, "greedy", check=True, cache=CACHE, min_size=0, driver="python")
    assert driven.ran is Runs.PYTHON_DRIVER and driven.ran.driven and driven.driver == Runs.PYTHON_DRIVER.value
    assert driven.kernels >= 1 and driven.library_kernels == [] and driven.fallbacks == []
