"""The per-kernel profile and the roofline (issue 34): each block of a partition timed beside
the ``time`` model's prediction, the report's ``profile`` section, the views, the CLI.

Figures are checked on injected clocks (no assertion reads the wall clock); a profile on the
real clock is checked for its sums, shapes and values. One capture, one kernel cache and one
profile are shared by the module (each Numba compilation costs about a second).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import replace

import numpy as np
import pytest

from fusionlab.backend.numba.driver import Driver
from fusionlab.backend.numba.plan import KernelCache, plan, run_plan
from fusionlab.capture import capture
from fusionlab.cli import main
from fusionlab.costs.timemodel import default_figures
from fusionlab.explore.jupyter.session import FuseResult
from fusionlab.explore.report import validate_report
from fusionlab.explore.viz.fallback import fallback_html
from fusionlab.explore.viz.roofline import profile_html, roofline_points, roofline_svg
from fusionlab.ir.examples import fig3
from fusionlab.pipeline import PipelineCaches, PipelineConfig, build
from fusionlab.pipeline import profiling
from fusionlab.pipeline.profiling import (
    BlockRuns, Ceilings, KernelTiming, Profile, SlowReason, block_flops, format_profile, profile, profile_plans,
    why_slower,
)
from fusionlab.pipeline.runner import run_config
from fusionlab.runtime.reference import Externals, Storage

from clocks import Ticks

KERNELS = KernelCache()
FIGURES = default_figures()   # the same ceilings on every machine
#: a kernel, an opaque call NumPy runs (the sort), a matrix product NumPy runs (a library
#: call: a block of its own, no kernel), then a kernel on the sorted values
SOURCE = """\
import numpy as np
x = np.linspace(0.0, 1.0, 20_000)
y = np.sort(np.sin(x * 7.0) + x)
m = np.arange(16.0).reshape(4, 4)
p = m @ m
z = y * 2.0 + 1.0
total = float(z.sum())
"""
CONFIG = run_config("greedy", "bohrium", 4096, True)


def plain() -> dict:
    ns: dict = {}
    exec(compile(SOURCE, "<plain>", "exec"), ns)
    return ns


@pytest.fixture(scope="module")
def cell():
    return capture(SOURCE)


@pytest.fixture(scope="module")
def profiled(cell) -> Profile:
    return profile(cell, CONFIG, cache=KERNELS, repeat=3, figures=FIGURES)


def ceilings() -> Ceilings:
    return Ceilings(3e10, 1e11, 5e10, "test figures")


def timing(runs: BlockRuns = BlockRuns.KERNEL, seconds: float = 1e-3, **kw) -> KernelTiming:
    fields = dict(batch=1, block=1, instructions=(1,), runs=runs, parallel=False, measured_seconds=seconds,
                  predicted_seconds=seconds / 2, read_bytes=8000, write_bytes=8000, flops=1000, bound="memory",
                  label="ADD")
    fields.update(kw)
    return KernelTiming(**fields)


# -- the block-by-block executor ------------------------------------------------------------

def test_run_plan_times_every_block_by_position_and_computes_the_same() -> None:
    p = plan(fig3(), [[i] for i in range(17)], min_size=0)
    untimed = run_plan(p, Storage(), Externals(), KERNELS)
    per: dict[int, float] = {}
    clock = Ticks()
    timed = run_plan(p, Storage(), Externals(), KERNELS, block_timings=per, clock=clock)
    assert sorted(per) == list(range(len(p.blocks)))     # every block, kernels and DELs alike
    assert set(per.values()) == {1.0}                    # one tick each: one reading a block, one at the end
    assert clock.now == len(p.blocks) + 1
    assert untimed.keys() == timed.keys() and all(np.array_equal(untimed[k], timed[k]) for k in untimed)


# -- the figures, on an injected clock ---------------------------------------------------------

def test_blocks_and_between_add_up_to_the_run(monkeypatch: pytest.MonkeyPatch, cell) -> None:
    clock = Ticks()
    call = Driver.__call__

    def slow(self):   # a whole run takes 100 ticks more than its readings: the driver's own time
        got = call(self)
        clock.now += 100.0
        return got

    monkeypatch.setattr(Driver, "__call__", slow)
    got = profile(cell, CONFIG, cache=KERNELS, repeat=3, figures=FIGURES, clock=clock)
    assert [k.measured_seconds for k in got.kernels] == [1.0] * len(got.kernels)
    assert got.run_seconds == 101.0
    assert got.between_seconds == 101.0 - len(got.kernels) > 0
    assert sum(k.measured_seconds for k in got.kernels) + got.between_seconds == got.run_seconds
    assert got.repeat == 3 and got.to_dict()["between_seconds"] == got.between_seconds


def test_between_is_never_negative_on_a_fast_run() -> None:
    got = profile(fig3(), PipelineConfig("greedy", "bohrium", min_size=0), cache=KERNELS, repeat=2, figures=FIGURES,
                  clock=Ticks())
    # a whole run is one tick, its blocks one tick each: more than the run, so nothing is between
    assert got.run_seconds == 1.0 and got.between_seconds == 0.0 and len(got.kernels) == 4


# -- what a profile holds --------------------------------------------------------------------

def test_each_block_says_what_runs_it(profiled: Profile) -> None:
    runs = [(k.runs, k.label) for k in profiled.kernels]
    assert (BlockRuns.OPAQUE, "np.sort") in runs
    assert any(r is BlockRuns.NUMPY and "CONTRACT" in label for r, label in runs)   # m @ m: NumPy's own call
    kernels = [k for k in profiled.kernels if k.runs is BlockRuns.KERNEL]
    assert kernels and all(k.parallel for k in kernels)   # 20,000 elements, min_size 4,096
    assert not any(k.parallel for k in profiled.kernels if k.runs is not BlockRuns.KERNEL)
    assert [k.batch for k in profiled.kernels] == [1] * len(profiled.kernels)
    assert all(k.instructions and min(k.instructions) >= 1 for k in profiled.kernels)
    assert profiled.driver == "block by block"   # an opaque call: no driver


def test_the_profiled_run_computes_what_numpy_does(profiled: Profile) -> None:
    want = plain()
    assert np.array_equal(profiled.values["y"], want["y"])                     # the sort and its input
    assert np.allclose(profiled.values["z"], want["z"], rtol=1e-13, atol=0)   # kernels: an ulp or two
    assert np.array_equal(profiled.values["p"], want["p"])
    assert profiled.values["total"] == pytest.approx(want["total"], rel=1e-12)


def test_sums_shapes_and_the_model_on_the_real_clock(profiled: Profile, cell) -> None:
    # the real clock's figures are checked for their form only (benchmarks/ measures them)
    assert profiled.between_seconds == pytest.approx(max(0.0, profiled.run_seconds - profiled.blocks_seconds))
    assert all(math.isfinite(k.measured_seconds) and k.predicted_seconds is not None for k in profiled.kernels)
    built = build(cell, CONFIG)
    p = built.plans[0]
    for k in profiled.kernels:   # the bytes are the time model's, the flops the bytecode's
        bt = next(b for b in profiling.TimeModel(FIGURES, 4096, opaque_seconds=cell.externals.seconds,
                                                 by_blocks=True).block_times(p.program, [p.blocks[k.position].instructions]))
        assert (k.read_bytes, k.write_bytes, k.bound) == (bt.read_bytes, bt.write_bytes, bt.bound)
        assert k.predicted_seconds == pytest.approx(bt.seconds)
    sin = next(k for k in profiled.kernels if k.label.startswith("RANGE"))
    assert sin.flops == 3 * 20_000   # MULTIPLY, SIN, ADD over 20,000 elements (RANGE and the copies: none)
    err = profiled.model_error
    assert len(err.ratios) == len(profiled.kernels)
    assert err.median_abs_log_ratio == pytest.approx(
        float(np.median([abs(math.log(k.predicted_seconds / k.measured_seconds)) for k in profiled.kernels])))
    worst = err.to_dict()["worst"]
    assert 1 <= len(worst) <= 5 and all(w["reason"] for w in worst)
    c = profiled.ceilings
    assert (c.memory_bytes_per_second, c.cache_bytes_per_second) == (33e9, 177e9)
    assert c.flops_per_second == pytest.approx(1 / FIGURES.ops["arithmetic"]["float64"]["parallel"])


def test_profile_runs_the_plans_run_builds(monkeypatch: pytest.MonkeyPatch, cell) -> None:
    seen = []

    def spy(plans, *args, **kwargs):
        seen.append(list(plans))
        raise RuntimeError("planned")

    monkeypatch.setattr(profiling, "profile_plans", spy)
    with pytest.raises(RuntimeError):
        profile(cell, CONFIG)
    want = build(cell, CONFIG).plans   # `fusionlab run`'s plans, on caches of its own
    assert [[(b.instructions, b.compiled and b.compiled.source, b.numpy) for b in p.blocks] for p in seen[0]] == \
        [[(b.instructions, b.compiled and b.compiled.source, b.numpy) for b in p.blocks] for p in want]


def test_blocks_are_numbered_as_the_partition_lists_them() -> None:
    got = profile(fig3(), PipelineConfig("singleton", "bohrium", min_size=0), cache=KERNELS, repeat=1,
                  figures=FIGURES, clock=Ticks())
    # as `run` prepares it: the dead writes of Fig. 3 dropped (13 instructions left); singletons:
    # block n is instruction n; DELs and SYNCs compute nothing and are not listed
    assert [(k.block, k.instructions) for k in got.kernels] == [(i + 1, (i + 1,)) for i in range(7)]
    assert [k.label for k in got.kernels] == ["COPY"] * 4 + ["MULTIPLY", "MAXIMUM", "MINIMUM"]
    assert [k.flops for k in got.kernels] == [0] * 4 + [4] * 3
    assert block_flops(fig3(), range(17)) == 4 + 4 + 4 + 4 + 4   # ADD, ADD, MULTIPLY, MAXIMUM, MINIMUM


def test_profile_dict_is_json_with_the_documented_keys(profiled: Profile) -> None:
    d = json.loads(json.dumps(profiled.with_numpy(1e-9).to_dict()))
    assert set(d) == {"algorithm", "cost_model", "repeat", "run_seconds", "numpy_seconds", "between_seconds",
                      "kernels", "ceilings", "why_slower", "model_error"}
    assert (d["algorithm"], d["cost_model"], d["repeat"], d["numpy_seconds"]) == ("greedy", "bohrium", 3, 1e-9)
    assert set(d["kernels"][0]) == {"batch", "block", "instructions", "runs", "parallel", "measured_seconds",
                                    "predicted_seconds", "bytes", "flops", "bound", "label"}
    assert set(d["ceilings"]) == {"memory_bytes_per_second", "cache_bytes_per_second", "flops_per_second", "label"}
    assert set(d["model_error"]) == {"median_abs_log_ratio", "worst"}
    reasons = [w["reason"] for w in d["why_slower"]]
    assert reasons and "opaque_calls" in reasons   # a nanosecond of NumPy: slower, and the sort is why
    assert [w["seconds"] for w in d["why_slower"]] == sorted((w["seconds"] for w in d["why_slower"]), reverse=True)


# -- why slower ---------------------------------------------------------------------------------

@pytest.mark.parametrize("reason, blocks, between", [
    (SlowReason.OPAQUE_CALLS, [timing(BlockRuns.OPAQUE, label="np.linalg.solve")], 0.0),
    (SlowReason.NUMPY_BLOCKS, [timing(BlockRuns.NUMPY)], 0.0),
    (SlowReason.LAUNCHES, [timing(seconds=5e-6, launch_seconds=3e-6, elements=100, block=b) for b in (1, 2, 3)], 0.0),
    (SlowReason.SMALL_ARRAYS, [timing(parallel=True, elements=5000)], 0.0),
    (SlowReason.DRIVER_OVERHEAD, [timing(seconds=1e-4, elements=1 << 20, launch_seconds=3e-6)], 2e-3),
])
def test_why_slower_gives_each_reason(reason: SlowReason, blocks: list[KernelTiming], between: float) -> None:
    run = sum(k.measured_seconds for k in blocks) + between
    prof = Profile(tuple(blocks), run, between, ceilings(), 3)
    got = why_slower(prof, numpy_seconds=run / 10)
    assert [w.reason for w in got] == [reason]
    assert got[0].seconds == pytest.approx(between if reason is SlowReason.DRIVER_OVERHEAD else run)
    assert got[0].detail and "NumPy eager" in got[0].detail
    assert why_slower(prof, numpy_seconds=run * 2) == [] and why_slower(prof, None) == []


def test_why_slower_lists_the_largest_first_and_counts_a_kernel_once() -> None:
    blocks = (timing(BlockRuns.OPAQUE, seconds=1e-3), timing(BlockRuns.NUMPY, seconds=4e-3, block=2),
              timing(parallel=True, elements=100, seconds=2e-6, launch_seconds=3e-6, block=3),
              timing(parallel=True, elements=100, seconds=2e-6, launch_seconds=3e-6, block=4))
    prof = Profile(blocks, 6e-3, 1e-3 - 4e-6, ceilings(), 3)
    got = why_slower(prof, 1e-3)
    assert [w.reason for w in got] == [SlowReason.NUMPY_BLOCKS, SlowReason.OPAQUE_CALLS, SlowReason.DRIVER_OVERHEAD,
                                       SlowReason.SMALL_ARRAYS]   # small parallel kernels are not launches too
    assert got[-1].seconds == pytest.approx(4e-6)


def test_model_error_and_miss_reasons() -> None:
    blocks = (timing(predicted_seconds=1e-3, seconds=1e-3),                      # exact
              timing(predicted_seconds=1e-4, seconds=1e-2, complex_dtype=True, elements=1 << 20, block=2),
              timing(BlockRuns.OPAQUE, predicted_seconds=None, block=3))          # not predicted
    err = Profile(blocks, 1.0, 0.0, ceilings(), 3).model_error
    assert [k.block for k, _ in err.ratios] == [1, 2]
    assert err.median_abs_log_ratio == pytest.approx(math.log(100) / 2)
    [(k, ratio, why)] = err.worst(1)
    assert (k.block, ratio) == (2, pytest.approx(0.01)) and why.startswith("complex dtype")
    assert profiling.miss_reason(timing(BlockRuns.OPAQUE, label="np.sort")).startswith("opaque call (np.sort)")
    assert profiling.miss_reason(timing(bound="launch", elements=1 << 20)).startswith("launch-dominated")
    kind = profiling.miss_kind
    big = dict(elements=1 << 20, seconds=1e-3, predicted_seconds=1e-4)   # ten times slower than predicted
    assert kind(timing(first_parallel=True, parallel=True, **big)) is profiling.MissKind.THREADS_WAKING
    assert kind(timing(first_touch_bytes=1 << 20, **big)) is profiling.MissKind.ALLOCATION
    assert kind(timing(first_touch_bytes=1 << 10, **big)) is profiling.MissKind.MEMORY_SLOWER   # small beside its traffic
    assert kind(timing(data_dependent=True, **big)) is profiling.MissKind.DATA_DEPENDENT
    assert kind(timing(freed_bytes=8 << 20, **big)) is profiling.MissKind.FREES
    assert kind(timing(after_bytes=8 << 20, **big)) is profiling.MissKind.AFTER_STREAMING
    assert kind(timing(narrow_integers=True, elements=1 << 20, seconds=1e-4, predicted_seconds=1e-3)) is \
        profiling.MissKind.NARROW_INTEGERS
    assert "8,388,608 bytes" in profiling.miss_reason(timing(freed_bytes=8 << 20, **big))
    assert kind(timing(elements=10)) is profiling.MissKind.TINY_ARRAY
    # a block faster than predicted is not explained by what makes blocks slow
    assert kind(timing(first_parallel=True, elements=1 << 20, seconds=1e-4, predicted_seconds=1e-3)) is \
        profiling.MissKind.MEMORY_FASTER


def test_the_first_parallel_kernel_and_the_memory_a_block_allocates(profiled: Profile) -> None:
    parallel = [k for k in profiled.kernels if k.parallel]
    assert [k.first_parallel for k in parallel] == [True] + [False] * (len(parallel) - 1)
    assert not any(k.first_parallel for k in profiled.kernels if not k.parallel)
    first = profiled.kernels[0]   # linspace, sin: x and its temporaries get memory here
    assert first.first_touch_bytes >= 20_000 * 8
    assert [k.after_bytes for k in profiled.kernels] == [0] + [k.bytes for k in profiled.kernels[:-1]]


# -- the views ----------------------------------------------------------------------------------

def hostile_profile() -> dict:
    blocks = (timing(label="<script>alert(1)</script>", flops=10_000_000, read_bytes=8_000_000,
                     write_bytes=8_000_000, seconds=1e-3, predicted_seconds=4e-4),
              timing(BlockRuns.OPAQUE, label="<img src=x onerror=alert(1)>", flops=0, block=2))
    return Profile(blocks, 3e-3, 1e-3, Ceilings(3e10, 1e11, 5e10, "<b>figures</b>"), 3, numpy_seconds=1e-3,
                   algorithm="greedy", cost_model="bohrium").to_dict()


def test_roofline_svg_draws_the_roofs_and_both_points_escaped() -> None:
    data = hostile_profile()
    svg = roofline_svg(data)
    assert svg.startswith("<svg") and svg.endswith("</svg>") and "<script" not in svg and "<img" not in svg
    assert "&lt;script&gt;" in svg
    assert svg.count('class="fl-roof"') == 3   # cache, memory, compute
    assert svg.count('class="fl-measured"') == 1 and svg.count('class="fl-predicted"') == 1   # the sort has no flops
    points, off = roofline_points(data)
    assert points[0]["intensity"] == pytest.approx(10e6 / 16e6) and [k["block"] for k in off] == [2]
    # the measured point lies below the predicted one (slower: fewer flops per second), at one intensity
    cx = re.findall(r'class="fl-(measured|predicted)" cx="([\d.]+)" cy="([\d.]+)"', svg)
    (m, mx, my), (p, px, py) = sorted(cx)
    assert mx == px and float(my) > float(py)


def test_views_survive_a_tampered_saved_report() -> None:
    data = hostile_profile()
    data["kernels"][0]["bytes"] = "<script>"   # a saved notebook may hold anything
    data["ceilings"]["flops_per_second"] = None
    html = profile_html(data)
    assert "<script" not in html and "fl-roofline" in html


def test_fallback_shows_the_profile_escaped_and_the_report_validates(cell) -> None:
    res = FuseResult(cell.batches, capture=cell, name="<script>alert(1)</script>", algorithms=["greedy"],
                     cost_models=["bohrium"])
    got = res.profile(repeat=2, numpy_seconds=1e-9)   # NumPy "faster": why_slower is filled in
    report = res.report()
    validate_report(report)
    assert report["profile"] == got.to_dict() and report["profile"]["why_slower"]
    html = fallback_html(report)
    assert "<script" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    # the roofline as an image (an untrusted notebook's sanitizer keeps it), its SVG inside
    import base64
    import re
    [src] = re.findall(r'<img alt="roofline of the profiled blocks" src="data:image/svg\+xml;base64,([^"]+)"', html)
    assert base64.b64decode(src).decode().startswith('<svg xmlns="http://www.w3.org/2000/svg" class="fl-roofline"')
    assert "fl-profile" in html
    broken = json.loads(json.dumps(report))
    broken["profile"]["kernels"][0]["runs"] = "gpu"
    with pytest.raises(Exception):
        validate_report(broken)


def test_explorer_profiles_what_compile_and_time_runs(monkeypatch: pytest.MonkeyPatch, cell) -> None:
    res = FuseResult(cell.batches, capture=cell, algorithms=["greedy"], cost_models=["bohrium", "max_contract"])
    res.select(cost_model="max_contract")
    seen = []
    real = profiling.profile_plans

    def spy(plans, *args, **kwargs):
        seen.append([[(b.instructions, b.compiled and b.compiled.source) for b in p.blocks] for p in plans])
        return real(plans, *args, **kwargs)

    monkeypatch.setattr(profiling, "profile_plans", spy)
    got = res.profile(repeat=1, numpy_seconds=1.0)
    assert (got.algorithm, got.cost_model) == ("greedy", "max_contract")
    want = build(cell, replace(CONFIG, cost_model="max_contract")).plans
    assert seen == [[[(b.instructions, b.compiled and b.compiled.source) for b in p.blocks] for p in want]]
    from fusionlab.explore.jupyter.channel import ExplorerChannel
    from fusionlab.explore.jupyter.display import ExplorerView
    from fusionlab.explore.jupyter.explorer import Explorer

    channel, view = ExplorerChannel(), ExplorerView(res, display=lambda bundle, **kw: None)
    view.show()
    channel.add(view)
    reply = channel.handle({"id": view.display_id, "action": "profile", "repeat": 1, "request": 3})
    assert reply["ok"] and reply["request"] == 3 and reply["profile"]["repeat"] == 1
    assert channel.handle({"id": view.display_id, "action": "profile", "repeat": -1})["ok"] is False
    ex = Explorer(res, repeat=1, display=lambda obj, **kw: None)
    assert ex.profile_button.description == "Profile"
    ex.run_profile()
    assert "fl-roofline" in ex.profile_view.value


# -- the command line -----------------------------------------------------------------------------

def test_cli_compare_profile_and_profile_print_the_blocks(capsys: pytest.CaptureFixture[str], tmp_path) -> None:
    path = tmp_path / "cell.py"
    path.write_text(SOURCE)
    code = main(["compare", str(path), "--algorithms", "greedy", "--costs", "bohrium,max_contract", "--repeat", "1",
                 "--profile"])
    out = capsys.readouterr().out
    assert code == 0
    assert out.count("profile of greedy / ") == 1   # the same kernels under both models: profiled once
    assert "of the memory roof" in out and "np.sort" in out and "opaque" in out
    code = main(["profile", str(path), "--repeat", "1", "--format", "json"])
    d = json.loads(capsys.readouterr().out)
    assert code == 0 and d["algorithm"] == "greedy" and d["numpy_seconds"] > 0
    assert {k["runs"] for k in d["kernels"]} == {"kernel", "numpy", "opaque"}


def test_format_profile_names_every_block_and_the_roof() -> None:
    text = format_profile(Profile((timing(), timing(BlockRuns.OPAQUE, flops=0, block=2)), 3e-3, 1e-3, ceilings(), 3,
                                  numpy_seconds=1e-3, algorithm="greedy", cost_model="bohrium"))
    assert "1.1" in text and "1.2" in text and "% of the memory roof" in text
    assert "why slower than NumPy" in text and "opaque_calls" in text
