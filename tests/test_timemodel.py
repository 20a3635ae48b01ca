"""The ``time`` cost model: monotone (Def. 6) on random programs, in every regime (launch-,
memory- and compute-bound, cache and memory, serial and parallel); its prediction for a
kernel of known traffic is its formula; usable by the algorithms."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from fusionlab import parse
from fusionlab.capture import capture
from fusionlab.costs import check_monotonic, get_cost_model
from fusionlab.ir.examples import fig3
from fusionlab.backend.numba.plan import DEFAULT_MIN_SIZE
from fusionlab.partition import partition
from fusionlab.costs.timemodel import (
    MIN_SIZE, TimeModel, default_figures, explain, load_figures, opcode_family, predict_seconds,
)
from fusionlab.workloads import get_workload
from strategies import programs


def _figures(**changes: object):
    return dataclasses.replace(default_figures(), **changes)


def _scaled_bandwidth(factor: float) -> dict:
    return {w: {k: {m: x * factor for m, x in d.items()} for k, d in kinds.items()}
            for w, kinds in default_figures().bandwidth.items()}


# the regimes a 4-element random program can be pushed into
REGIMES = {
    "launch-bound, serial": (default_figures(), MIN_SIZE),
    "memory-bound, parallel above 3 elements, out of cache": (
        _figures(bandwidth=_scaled_bandwidth(1e-7), llc_bytes=16), 3),
    "compute-bound, all parallel": (
        _figures(ops={f: {d: {m: x * 1e5 for m, x in mm.items()} for d, mm in dd.items()}
                      for f, dd in default_figures().ops.items()}), 0),
    # parallel figures worse than serial ones: the model must use the serial ones
    "inverted parallel figures": (
        _figures(bandwidth={w: {k: {"parallel": d["serial"] / 10, "serial": d["serial"]}
                                for k, d in kinds.items()}
                            for w, kinds in _scaled_bandwidth(1e-7).items()},
                 launch={"parallel": 1e-3, "serial": 1e-6, "argument": 1e-7}), 3),
}


@pytest.mark.parametrize("regime", list(REGIMES))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program=programs(max_size=7))
def test_monotone_on_random_programs(regime: str, program) -> None:
    figures, min_size = REGIMES[regime]
    assert check_monotonic(TimeModel(figures, min_size), program) is None


@pytest.mark.parametrize("name", ["black_scholes", "shallow_water", "heat_equation", "softmax"])
def test_monotone_on_workloads(name: str) -> None:
    cap = capture(get_workload(name).script("tiny"))
    program = max(cap.batches, key=len)
    for figures, min_size in REGIMES.values():
        assert check_monotonic(TimeModel(figures, min_size), program, trials=150, seed=3) is None


KNOWN = '''
ARRAY A float64[1000000]
ARRAY B float64[1000000]
ARRAY T float64[1000000]
ARRAY C float64[1000000]
ARRAY S float64[2000000]
MULTIPLY T, A, B
EXP T, T
ADD C, T, A
SYNC C
DEL T
ADD A, S[::2], 1
'''


def test_known_kernel_matches_the_formula() -> None:
    f = default_figures()
    p = parse(KNOWN)
    model = TimeModel(f)
    fused = [0, 1, 2, 3, 4]
    got = model.cost(p, [fused, [5]])
    # arrays alive at once: A, B, T, C (8 MB each); then T freed and S (16 MB) read: 40 MB
    # at the peak, of which the 32 MiB last-level cache holds the share ``hit``
    hit = (32 << 20) / 40e6

    def per_byte(kind: str, mode: str) -> float:
        return hit / f.bandwidth["cache"][kind][mode] + (1 - hit) / f.bandwidth["memory"][kind][mode]

    # block 1: T contracted (no traffic, no allocation); reads A, B; writes C (synced: fresh memory)
    memory1 = 16e6 * per_byte("read", "parallel") + 8e6 * per_byte("write", "parallel")
    ops = f.ops
    compute1 = 1e6 * (2 * ops["arithmetic"]["float64"]["parallel"] + ops["exp"]["float64"]["parallel"])
    block1 = (f.launch["parallel"] + 3 * f.launch["argument"] + f.allocation["fixed"] + 8e6 * f.allocation["per_byte"]
              + max(memory1, compute1))
    # block 2: S[::2] is read by whole cache lines of two elements (16 bytes each); A written
    memory2 = 1e6 * 16 * per_byte("read", "parallel") + 8e6 * per_byte("write", "parallel")
    block2 = f.launch["parallel"] + 2 * f.launch["argument"] + max(memory2, 1e6 * ops["arithmetic"]["float64"]["parallel"])
    assert got == pytest.approx(block1 + block2, rel=1e-12)
    parts = explain(p, [fused, [5]], model)
    assert [b.read_bytes for b in parts] == [16_000_000, 16_000_000]
    assert [b.write_bytes for b in parts] == [8_000_000, 8_000_000]
    assert [b.parallel for b in parts] == [True, True]
    assert sum(b.seconds for b in parts) == pytest.approx(got, rel=1e-12)
    assert predict_seconds(p, [fused, [5]], f) == got + f.launch["run"]   # and one run of the driver
    # unfused, T costs traffic both ways: the fused block is cheaper
    assert got < model.cost(p, [[i] for i in range(6)])


def test_serial_below_min_size_and_the_backend_agrees() -> None:
    assert MIN_SIZE == DEFAULT_MIN_SIZE
    p = parse("ARRAY A float64[100]\nARRAY B float64[100]\nSQRT B, A\nSYNC B\n")
    f = default_figures()
    (b,) = explain(p, [[0, 1]], TimeModel(f))
    assert not b.parallel and b.launch == f.launch["serial"] + 2 * f.launch["argument"]
    assert b.compute == 100 * f.ops["sqrt"]["float64"]["serial"]
    (b,) = explain(p, [[0, 1]], TimeModel(f, min_size=100))
    assert b.parallel and b.compute == 100 * f.ops["sqrt"]["float64"]["parallel"]


def test_families_and_dtypes() -> None:
    p = parse("ARRAY A float32[10]\nARRAY B float32[10]\nARRAY C int64[10]\nARRAY D int64[10]\n"
              "DIVIDE B, A, 2\nFLOOR_DIVIDE D, C, 3\nPOWER B, A, A\n")
    f = default_figures()
    b1, b2, b3 = explain(p, [[0], [1], [2]], TimeModel(f))
    assert b1.compute == 10 * f.ops["division"]["float32"]["serial"]
    assert b2.compute == 10 * f.ops["division"]["int64"]["serial"]
    assert b3.compute == pytest.approx(10 * (f.ops["exp"]["float32"]["serial"] + f.ops["log"]["float32"]["serial"]))
    assert opcode_family(p[2].opcode) == ("exp", "log")


def test_algorithms_accept_time() -> None:
    p = fig3()
    singles = get_cost_model("time").cost(p, [[i] for i in range(len(p))])
    for algorithm in ("singleton", "linear", "unintrusive", "greedy", "optimal"):
        r = partition(p, algorithm, "time")
        assert r.legal and r.cost <= singles * (1 + 1e-12), algorithm
    assert partition(p, "optimal", "time").cost <= partition(p, "greedy", "time").cost * (1 + 1e-12)


def test_default_figures_without_a_calibration(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FUSIONLAB_CACHE", str(tmp_path))
    model = get_cost_model("time")
    assert model.figures == default_figures()
    assert "default figures" in model.description and "fusionlab calibrate" in model.description
    calibrated = dataclasses.replace(default_figures(), source="measured", host="h", cpu="c",
                                     measured="2026-01-01T00:00:00Z")
    calibrated.save(tmp_path / "machine-x.json")
    assert load_figures(tmp_path / "machine-x.json") == calibrated
    assert "calibrated on h (c)" in TimeModel(calibrated).description


def test_costs_are_seconds_of_a_sane_size() -> None:
    # Fig. 3 has 10-element arrays: a few serial kernel launches, microseconds
    s = predict_seconds(fig3(), [[i] for i in range(17)], default_figures())
    assert 1e-6 < s < 1e-4
    assert math.isfinite(s)


def test_an_opaque_call_is_priced_by_the_seconds_it_took_at_capture():
    from fusionlab.capture import capture
    from fusionlab.costs.timemodel import TimeModel, explain

    p = parse('ARRAY A float64[1000]\nARRAY B float64[1000]\nOPAQUE B, A, key=7, name="np.sort"\nSYNC B\n')
    formula = TimeModel(default_figures())
    measured = TimeModel(default_figures(), opaque_seconds={7: 0.25, 8: 9.0})
    (plain,), (timed,) = explain(p, [[0, 1]], formula), explain(p, [[0, 1]], measured)
    # its seconds, plus the executor's copies of its argument and result (16 kB read and written)
    m = measured
    copies = 16_000 * (m.seconds_per_byte("read", False, 16_000) + m.seconds_per_byte("write", False, 16_000))
    assert timed.compute == pytest.approx(0.25 + copies, rel=1e-12) and plain.compute < 1e-3
    assert timed.seconds == pytest.approx(timed.launch + timed.allocation + 0.25 + copies)
    assert formula.cache_key() != measured.cache_key()   # merge caches never mix the two
    # capture records each opaque call's seconds under its key
    cap = capture("import numpy as np\na = np.arange(100.0)[::-1].copy()\nb = np.sort(a)\n")
    (ins,) = [i for i in cap.program if i.opcode.name == "OPAQUE"]
    assert set(cap.externals.seconds) == {ins.attr("key")} and cap.externals.seconds[ins.attr("key")] > 0


CONTRACTION = '''
ARRAY A float64[300,200]
ARRAY B float64[100,200]
ARRAY C float64[300,100]
ARRAY D float32[64]
ARRAY E float32[64]
ARRAY F float32[]
CONTRACT C, A, B{offset=0, shape=(200,100), strides=(1,200)}, subscripts="ij,jk->ik"
SYNC C
CONTRACT F, D, E, subscripts="i,i->"
'''


@pytest.mark.parametrize("route", ["einsum", "gemm"])
def test_contraction_priced_by_its_flops(route: str) -> None:
    """A CONTRACT costs 2 x (product of its index extents) flops at the calibrated rate of
    its route, beside its operands' and output's traffic (roofline), as one NumPy call."""
    f = default_figures()
    p = parse(CONTRACTION)
    model = TimeModel(f, contraction=route)
    mm, dot = explain(p, [[0, 1], [2]], model)
    assert mm.compute == pytest.approx(2 * 300 * 200 * 100 * f.flops[route]["float64"], rel=1e-12)
    assert dot.compute == pytest.approx(2 * 64 * f.flops[route]["float32"], rel=1e-12)
    # A read whole; B's transpose moves a cache line per element, but never more than B
    assert mm.read_bytes == 300 * 200 * 8 + min(100 * 200 * 64, 100 * 200 * 8) and mm.write_bytes == 300 * 100 * 8
    w = 300 * 200 * 8 + 100 * 200 * 8 + 300 * 100 * 8 + 2 * 64 * 4 + 4   # every array alive at the end
    per_r, per_w = (model.seconds_per_byte(k, True, w) for k in ("read", "write"))
    assert mm.memory == pytest.approx(mm.read_bytes * per_r + mm.write_bytes * per_w, rel=1e-12)
    assert mm.seconds == pytest.approx(mm.launch + mm.allocation + max(mm.memory, mm.compute), rel=1e-12)
    assert mm.bound == "compute"   # 12 MFLOP against 2 MB
    calibrated = dataclasses.replace(f, flops={route: {"float64": 1e-9, "float32": 2e-9}})
    (mm2, dot2) = explain(p, [[0, 1], [2]], TimeModel(calibrated, contraction=route))
    assert mm2.compute == pytest.approx(2 * 300 * 200 * 100 * 1e-9) and dot2.compute == pytest.approx(2 * 64 * 2e-9)
    assert check_monotonic(model, p) is None
    with pytest.raises(ValueError, match="auto, einsum, gemm"):
        TimeModel(f, contraction="blas")


def test_contraction_route_follows_the_numpy_call_it_replays() -> None:
    """auto: BLAS's rate for a float matmul / dot / inner, einsum's own loops otherwise."""
    f = default_figures()
    head = "ARRAY A float64[30,20]\nARRAY B float64[20,10]\nARRAY C float64[30,10]\n"
    for via, route in (("matmul", "gemm"), ("dot", "gemm"), ("einsum", "einsum")):
        p = parse(head + f'CONTRACT C, A, B, subscripts="ij,jk->ik", via="{via}"\n')
        (b,) = explain(p, [[0]], TimeModel(f))
        assert b.compute == pytest.approx(2 * 30 * 20 * 10 * f.flops[route]["float64"], rel=1e-12)
    ints = parse(head.replace("float64", "int64") + 'CONTRACT C, A, B, subscripts="ij,jk->ik", via="matmul"\n')
    (b,) = explain(ints, [[0]], TimeModel(f))
    assert b.compute == pytest.approx(2 * 30 * 20 * 10 * f.flops["einsum"]["int64"], rel=1e-12)


CURVE = {kind: {mode: [[1 << 20, 100e9 * s], [16 << 20, 25e9 * s], [256 << 20, 10e9 * s]]
                for mode, s in (("parallel", 2.0), ("serial", 1.0))} for kind in ("read", "write")}


def test_bandwidth_curve_interpolates_in_the_log_of_the_working_set() -> None:
    model = TimeModel(_figures(curve=CURVE))
    assert model.seconds_per_byte("read", False, 1 << 10) == 1 / 100e9          # flat below
    assert model.seconds_per_byte("read", False, 1 << 20) == 1 / 100e9
    assert model.seconds_per_byte("write", False, 1 << 30) == 1 / 10e9           # flat above
    mid = model.seconds_per_byte("read", False, 4 << 20)                            # halfway in log
    assert mid == pytest.approx((1 / 100e9 + 1 / 25e9) / 2, rel=1e-12)
    assert model.seconds_per_byte("read", True, 4 << 20) == pytest.approx(mid / 2, rel=1e-12)
    # a parallel figure slower than the serial one is not used
    slow = {k: {"parallel": [[1 << 20, 1e9]], "serial": [[1 << 20, 5e9]]} for k in ("read", "write")}
    assert TimeModel(_figures(curve=slow)).seconds_per_byte("read", True, 1 << 20) == 1 / 5e9
    # the known kernel: every byte at the curve's figure for the program's 40 MB peak
    p = parse(KNOWN)
    (b1, b2) = explain(p, [[0, 1, 2, 3, 4], [5]], model)
    w = 40_000_000
    assert b1.memory == pytest.approx(16e6 * model.seconds_per_byte("read", True, w)
                                      + 8e6 * model.seconds_per_byte("write", True, w), rel=1e-12)
    assert model.seconds_per_byte("read", True, w) != TimeModel(default_figures()).seconds_per_byte("read", True, w)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program=programs(max_size=7))
def test_monotone_with_a_bandwidth_curve(program) -> None:
    scaled = {k: {m: [[b / 1e7, bw * 1e-7] for b, bw in pts] for m, pts in d.items()} for k, d in CURVE.items()}
    assert check_monotonic(TimeModel(_figures(curve=scaled), 3), program) is None


def test_overlapping_views_of_one_base_move_it_once() -> None:
    """``x[1:] - x[:-1]`` reads x once: per base, the views' bytes up to the base's own."""
    p = parse("ARRAY X float64[1001]\nARRAY Y float64[1000]\nARRAY Z float64[500]\n"
              "SUBTRACT Y, X[1:], X[:-1]\nSYNC Y\nADD Z, X[:500], X[501:]\nSYNC Z\n")
    a, b = explain(p, [[0, 1], [2, 3]], TimeModel(default_figures()))
    assert a.read_bytes == 1001 * 8            # not 2 x 1000 x 8
    assert b.read_bytes == 1000 * 8            # two disjoint halves: both


BY_BLOCKS = '''
ARRAY A float64[100]
ARRAY B float64[100]
ARRAY C float64[100]
ARRAY D float64[100]
SQRT B, A
ADD C, B, 1.0
OPAQUE D, C, key=7, name="np.sort"
MULTIPLY C, D, 2.0
SYNC C
'''


def test_a_program_without_a_driver_pays_per_block_and_per_numpy_call() -> None:
    """An opaque call (or a contraction) leaves the run block by block: every computing
    block pays the bookkeeping ``launch["block"]``, and a lone instruction NumPy runs at
    least ``launch["numpy"]``; without one, the same blocks cost kernel launches only."""
    f = dataclasses.replace(default_figures(), launch={**default_figures().launch, "block": 3e-6, "numpy": 50e-6})
    model = TimeModel(f)
    p = parse(BY_BLOCKS)
    a, b, c = explain(p, [[0, 1], [2], [3, 4]], model)
    kernel = f.launch["serial"] + f.launch["argument"] * 2           # two views: D read, C written
    kernel3 = kernel + f.launch["argument"]                            # A read, B and C written
    assert a.launch == pytest.approx(kernel3 + 3e-6, rel=1e-12)     # two instructions: a kernel
    assert b.launch == 50e-6                                          # the opaque call: NumPy
    assert c.launch == 50e-6                                          # lone and small: NumPy
    plain = parse(BY_BLOCKS.replace('OPAQUE D, C, key=7, name="np.sort"', "NEGATIVE D, C"))
    a2, b2, c2 = explain(plain, [[0, 1], [2], [3, 4]], model)
    assert a2.launch == pytest.approx(kernel3, rel=1e-12) and c2.launch == pytest.approx(kernel, rel=1e-12)
    assert check_monotonic(model, p) is None


@pytest.mark.parametrize("numpy_call", [0.1e-6, 50e-6])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program=programs(max_size=7))
def test_monotone_block_by_block(numpy_call: float, program) -> None:
    """Block by block (as with an opaque call elsewhere in the capture), lone instructions
    priced as NumPy calls, cheaper or dearer than a kernel: still monotone, serial or parallel."""
    f = _figures(launch={**default_figures().launch, "block": 2e-6, "numpy": numpy_call})
    for min_size in (MIN_SIZE, 3):
        assert check_monotonic(TimeModel(f, min_size, by_blocks=True), program) is None


def test_an_opaque_matrix_product_is_priced_by_its_flops() -> None:
    """np.matmul as an opaque call: 2 m k n flops at the BLAS rate (plus the executor's
    copies), whatever one timing at capture said."""
    p = parse('ARRAY A float64[100,400]\nARRAY B float64[400,50]\nARRAY C float64[100,50]\n'
              'OPAQUE C, A, B, key=3, name="np.matmul"\nSYNC C\n')
    f = default_figures()
    m = TimeModel(f, opaque_seconds={3: 5.0})
    (b,) = explain(p, [[0, 1]], m)
    w = (100 * 400 + 400 * 50 + 100 * 50) * 8
    copies = w * (m.seconds_per_byte("read", False, w) + m.seconds_per_byte("write", False, w))
    assert b.compute == pytest.approx(2 * 100 * 400 * 50 * f.flops["gemm"]["float64"] + copies, rel=1e-12)
    sort = parse('ARRAY A float64[100]\nARRAY C float64[100]\nOPAQUE C, A, key=3, name="np.sort"\n')
    assert explain(sort, [[0]], m)[0].compute > 5.0      # other calls keep their measured seconds
