"""Reductions over axis 0 in a split kernel take their rows ``ROW_LANES`` (eight) at a time
(row lanes, ``fusionlab.backend.numba.lanes``): each copy of the body has its own row and its own
row-sum accumulators, and the partial row is read and written once per ``ROW_LANES`` rows. Checked for
structure (which kernels are laned, which are not) and against NumPy on shapes around the
lanes and the split ranges, with NaN and infinities, empty and one-row inputs, float32 and
integer dtypes, and non-contiguous views captured from Python."""

from __future__ import annotations

import io
from contextlib import redirect_stdout

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fusionlab import parse
from fusionlab.capture import capture
from fusionlab.backend.numba.codegen import get_kernel
from fusionlab.backend.numba.lanes import ROW_LANES
from fusionlab.backend.numba.layout import split_ranges
from fusionlab.backend.numba.plan import plan, run_plan
from fusionlab.runtime.reference import Externals, Storage
from fusionlab.pipeline.runner import run

from test_numba import CACHE

_OPS = {"ADD_REDUCE": np.add, "MINIMUM_REDUCE": np.minimum, "MAXIMUM_REDUCE": np.maximum,
        "MULTIPLY_REDUCE": np.multiply}


def _program(rows: int, cols: int, op: str = "ADD_REDUCE", dtype: str = "float64", out: str | None = None) -> str:
    # a map stored on the way, its row sums (innermost axis) and its reduction over axis 0
    out = out or dtype
    return (f"ARRAY x {dtype}[{rows}, {cols}]\nARRAY y {dtype}[{rows}, {cols}]\nARRAY r {out}[{rows}]\n"
            f"ARRAY c {out}[{cols}]\n"
            "ADD y, x, x\nADD_REDUCE r, y, axis=1\n"
            f"{op} c, y, axis=0\nSYNC y\nSYNC r\nSYNC c\n")


def _run(x: np.ndarray, op: str = "ADD_REDUCE", out: str | None = None, parallel: bool = True) -> dict[str, np.ndarray]:
    program = parse(_program(*x.shape, op, x.dtype.name, out))
    p = plan(program, [list(range(len(program)))], min_size=0 if parallel else 1 << 30)
    assert p.blocks[0].kernel is not None, p.blocks[0].reason
    return run_plan(p, Storage({"x": x}), Externals(), CACHE)


def test_axis_0_reductions_take_rows_in_lanes():
    source = get_kernel(parse(_program(1000, 300)), [0, 1, 2]).source
    assert f"range(r_lo, r_mid, u{ROW_LANES})" in source
    # one update of the partial row per ROW_LANES rows, the copies' elements pairwise
    terms = [f"acc3_r{k}" for k in range(ROW_LANES)]
    while len(terms) > 1:   # pairwise: ((r0 + r1) + (r2 + r3)) + ...
        terms = [f"({terms[j]} + {terms[j + 1]})" for j in range(0, len(terms), 2)]
    assert f"acc3_part[sp, i1] = acc3_part[sp, i1] + {terms[0]}" in source
    assert source.count("acc3_part[sp, i1] = ") == 2   # the lanes and the remaining rows
    for k in range(1, ROW_LANES):   # each copy: its own row and its own row-sum accumulator
        assert f"i0_r{k} = i0 + u{k}" in source
        assert f"acc2_r{k} = acc2_r{k} + y_w" in source or f"acc2_r{k} = acc2_r{k} + " in source
        assert f"r[i0_r{k}] = acc2_r{k}" in source
        assert f"y[i0_r{k}, i1] = " in source   # the stored map, per row


def test_kernels_without_a_split_or_with_order_dependent_reductions_are_not_laned():
    rows_only = parse("ARRAY x float64[1000, 300]\nARRAY r float64[1000]\nADD_REDUCE r, x, axis=1\nSYNC r\n")
    assert "r_mid" not in get_kernel(rows_only, [0, 1]).source   # nothing over axis 0: no partial row
    arg = parse("ARRAY x float64[1000, 300]\nARRAY c int64[300]\nARGMAX_REDUCE c, x, axis=0\nSYNC c\n")
    assert "r_mid" not in get_kernel(arg, [0, 1]).source   # ties keep the first row: order matters
    full = parse("ARRAY x float64[1000, 300]\nARRAY c float64[300]\nARRAY s float64[]\n"
                 "ADD_REDUCE c, x, axis=0\nADD_REDUCE s, x, axis=None\nSYNC c\nSYNC s\n")
    assert "r_mid" not in get_kernel(full, [0, 1, 2]).source   # a scalar per range: not copied


SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e300]


@settings(max_examples=40, deadline=None)
@given(rows=st.sampled_from([1, 2, 3, 4, 5, 7, 8, 63, 64, 65, 67, 256, 259, 517]),
       cols=st.sampled_from([1, 3, 17]), op=st.sampled_from(sorted(_OPS)),
       dtype=st.sampled_from(["float64", "float32", "int64", "int32"]), seed=st.integers(0, 2**16),
       specials=st.lists(st.tuples(st.integers(0, 10**6), st.sampled_from(SPECIAL)), max_size=3),
       parallel=st.booleans())
def test_row_laned_kernels_equal_numpy(rows, cols, op, dtype, seed, specials, parallel):
    rng = np.random.default_rng(seed)
    x = (rng.normal(size=(rows, cols)) * (1 if op == "MULTIPLY_REDUCE" else 100)).astype(dtype)
    if dtype.startswith("float"):
        with np.errstate(over="ignore"):   # 1e300 as float32: inf
            for at, value in specials:
                x.flat[at % x.size] = value
    got = _run(x, op, parallel=parallel)
    with np.errstate(all="ignore"):
        y = x + x
        want = {"y": y, "r": y.sum(axis=1), "c": _OPS[op].reduce(y, axis=0)}
    for name, w in want.items():
        g = got[name].reshape(w.shape)
        if dtype.startswith("int") or op in ("MINIMUM_REDUCE", "MAXIMUM_REDUCE") and name == "c" or name == "y":
            np.testing.assert_array_equal(g, w, err_msg=name)   # exact: integers wrap alike, extremes are exact
        else:   # a float sum or product in another order: within a few ulps per term
            eps = float(np.finfo(dtype).eps)
            scale = np.abs(y).sum(axis=1 if name == "r" else 0) if op == "ADD_REDUCE" or name == "r" else np.abs(w)
            with np.errstate(all="ignore"):
                ok = np.isclose(g, w, rtol=8 * rows * eps, atol=0) | (np.abs(g - w) <= 4 * (rows + cols) * eps * scale) \
                    | (np.isnan(g) & np.isnan(w)) | (g == w)
            assert ok.all(), (name, g[~ok][:3], w[~ok][:3])


def test_a_narrow_sum_accumulates_in_its_output_dtype():
    x = np.full((259, 5), 100, dtype=np.int8)   # int8 -> int64 sums: no wrap in the copies' pairs
    got = _run(x, out="int64")
    np.testing.assert_array_equal(got["c"], (x + x).sum(axis=0, dtype=np.int64))
    flags = np.random.default_rng(3).random((517, 4)) < 0.5   # bool -> int64 counts
    program = parse("ARRAY x bool[517, 4]\nARRAY c int64[4]\nADD_REDUCE c, x, axis=0\nSYNC c\n")
    assert "r_mid" in get_kernel(program, [0, 1]).source
    p = plan(program, [[0, 1]], min_size=0)
    got = run_plan(p, Storage({"x": flags}), Externals(), CACHE)
    np.testing.assert_array_equal(got["c"], flags.sum(axis=0))


@pytest.mark.parametrize("shape", [(0, 5), (1, 5), (5, 0), (4, 1)])
def test_empty_and_single_row_inputs(shape):
    # through capture: an empty iteration space has no kernel (NumPy runs it)
    x = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    with redirect_stdout(io.StringIO()):
        cap = capture("y = x + x\nr = y.sum(axis=1)\nc = y.sum(axis=0)\n", {"x": x})
    got = run(cap, "greedy", check=True, cache=CACHE, min_size=0, driver="blocks")
    np.testing.assert_array_equal(np.asarray(got.values["c"]).reshape(shape[1]), (x + x).sum(axis=0))
    np.testing.assert_array_equal(np.asarray(got.values["r"]).reshape(shape[0]), (x + x).sum(axis=1))


@pytest.mark.parametrize("view", ["x[::2]", "x[:, ::3]", "x.T", "x[3:-1, 1:]"])
def test_non_contiguous_views_through_capture_equal_numpy(view):
    source = (f"import numpy as np\nx = np.random.default_rng(7).normal(size=(1030, 66))\nv = {view}\nr = v.sum(axis=1)\nc = v.sum(axis=0)\n"
              "lo = v.min(axis=0)\nm = (v * 2).max(axis=0)\n")
    with redirect_stdout(io.StringIO()):
        cap = capture(source, {})
    got = run(cap, "greedy", check=True, cache=CACHE, min_size=0, driver="blocks")
    x = np.random.default_rng(7).normal(size=(1030, 66))
    v = eval(view)
    want = {"r": v.sum(axis=1), "c": v.sum(axis=0), "lo": v.min(axis=0), "m": (v * 2).max(axis=0)}
    for name, w in want.items():
        np.testing.assert_allclose(np.asarray(got.values[name]).reshape(w.shape), w, rtol=1e-12, atol=1e-12,
                                   err_msg=name)
    assert got.check is None or got.check.ok, got.check
    assert any("r_mid" in b.kernel.source for p in got.plans for b in p.blocks if b.kernel is not None)   # row lanes ran


@pytest.mark.parametrize("rows,cols", [(8, 1_000_000), (300, 200), (1000, 2000), (4000, 4000), (20, 100), (3, 5)])
def test_the_ranges_a_kernel_computes_are_its_layouts(rows, cols):
    # the driver sizes its chunks from the layout's count; the kernel computes it from its extents
    k = get_kernel(parse(f"ARRAY x float64[{rows}, {cols}]\nARRAY r float64[{rows}]\nARRAY c float64[{cols}]\n"
                         "ADD_REDUCE r, x, axis=1\nADD_REDUCE c, x, axis=0\n"), [0, 1])
    line = next(x for x in k.source.splitlines() if "nsp = " in x)
    expr = line.split("nsp = ", 1)[1].split("  #")[0]
    env = {"n0": rows, "n1": cols, **{f"u{v}": v for v in (1, 32, 64, 65536)}}
    assert eval(expr, env) == k.parallel_iterations == split_ranges(rows, rows * cols)
    assert 1 <= k.parallel_iterations <= min(rows, 64)


@pytest.mark.parametrize("shape", [(1000, 2000), (67, 33), (5, 3)])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_a_recorded_draw_reduced_in_its_own_kernel_takes_rows_in_lanes(shape, dtype):
    # the draw freed early (fusionlab.passes.deadbases): its values are the kernel's random
    # argument, read in place, and both reductions take its rows four at a time
    source = (f"import numpy as np\nx = np.random.default_rng(3).random({shape}, dtype=np.{dtype})\n"
              "r = x.sum(axis=1)\nc = x.sum(axis=0)\ns = float(r.max() + c.max())\ndel x\n")
    with redirect_stdout(io.StringIO()):
        cap = capture(source, {})
    got = run(cap, "greedy", check=True, cache=CACHE, min_size=0, driver="numba")
    assert got.check is None or got.check.ok, got.check
    x = np.random.default_rng(3).random(shape, dtype=dtype)
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(got.values["r"], x.sum(axis=1), rtol=tol)
    np.testing.assert_allclose(got.values["c"], x.sum(axis=0), rtol=tol)
    kernels = [b.kernel.source for p in got.plans for b in p.blocks if b.kernel is not None]
    assert [k for k in kernels if "rnd0[i0_r3, i1]" in k and "r_mid" in k], kernels
