"""Float minimum and maximum over everything accumulate in lanes (``lanes``): the
chunk loop is unrolled, each copy with its own select and NaN flag. Checked for structure
(which reductions are laned, which are not) and against NumPy exactly (the extremes are
exact) on sizes around the lanes and chunks, with NaN, infinities and signed zeros."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fusionlab import parse
from fusionlab.backend.numba.codegen import get_kernel
from fusionlab.backend.numba.lanes import LANES
from fusionlab.backend.numba.plan import plan, run_plan
from fusionlab.runtime.reference import Externals, Storage

from test_numba import CACHE


def _program(n: int, dtype: str = "float64") -> str:
    # min and max of x, and max |x - m| of a map stored on the way (the z-score kernel's shape)
    return (f"ARRAY x {dtype}[{n}]\nARRAY m {dtype}[]\nARRAY lo {dtype}[]\nARRAY hi {dtype}[]\n"
            f"ARRAY d {dtype}[{n}]\nARRAY a {dtype}[{n}]\nARRAY top {dtype}[]\n"
            "MINIMUM_REDUCE lo, x, axis=None\nMAXIMUM_REDUCE hi, x, axis=None\n"
            "SUBTRACT d, x, m\nABSOLUTE a, d\nMAXIMUM_REDUCE top, a, axis=None\nDEL a\n"
            "SYNC lo\nSYNC hi\nSYNC d\nSYNC top\n")


def _run(x: np.ndarray, m: float, parallel: bool) -> dict[str, np.ndarray]:
    program = parse(_program(x.size, x.dtype.name))
    p = plan(program, [list(range(len(program)))], min_size=0 if parallel else 1 << 30)
    assert p.blocks[0].kernel is not None, p.blocks[0].reason
    return run_plan(p, Storage({"x": x, "m": np.array(m, dtype=x.dtype)}), Externals(), CACHE)


def test_float_extremes_are_laned_and_others_are_not():
    program = parse(_program(10_000))
    source = get_kernel(program, list(range(len(program)))).source
    for acc in ("acc1", "acc2", "acc5"):   # lo, hi, top: each in LANES lanes with a NaN flag
        assert f"{acc}_l{LANES - 1} = {acc}_x_l{LANES - 1} if" in source
        assert f"{acc}_n |= {acc}_n_l{LANES - 1}" in source
        assert f"{acc} = np.minimum({acc}, x" not in source and f"{acc} = np.maximum({acc}, x" not in source
    # the body computes a map (d): buffered (lanes.buffered_chunk): the map and the
    # elements in one loop of their own, the lanes reading the chunk's buffers
    assert source.count("d[i0] = ") == 1 and f"acc5_x_l{LANES - 1} = acc5_buf[acc_ib - acc_lo + u{LANES - 1}]" in source
    plain = parse("ARRAY x float64[10000]\nARRAY lo float64[]\nMINIMUM_REDUCE lo, x, axis=None\nSYNC lo\n")
    loads = get_kernel(plain, [0, 1]).source   # only loads: unrolled as before, no buffer
    assert "_buf" not in loads and loads.count("acc1_x_l3 = x[i0]") == 1
    ints = parse("ARRAY x int64[10000]\nARRAY lo int64[]\nMINIMUM_REDUCE lo, x, axis=None\nSYNC lo\n")
    assert "_l1" not in get_kernel(ints, [0, 1]).source   # no NaN, no branches: one accumulator
    sums = parse("ARRAY x float64[10000]\nARRAY s float64[]\nADD_REDUCE s, x, axis=None\nSYNC s\n")
    assert "_l1" not in get_kernel(sums, [0, 1]).source   # sums vectorise as they are
    rows = parse("ARRAY x float64[100, 100]\nARRAY lo float64[100]\nMINIMUM_REDUCE lo, x, axis=1\nSYNC lo\n")
    assert "_l1" not in get_kernel(rows, [0, 1]).source   # one per row: not a chunked loop


SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e308, -1e308]


@settings(max_examples=40, deadline=None)
@given(n=st.sampled_from([1, 2, 3, 4, 5, 7, 8, 4095, 4096, 4097, 4099, 8195, 9001]),
       seed=st.integers(0, 2**16), specials=st.lists(st.tuples(st.integers(0, 10**6), st.sampled_from(SPECIAL)),
                                                     max_size=3),
       dtype=st.sampled_from(["float64", "float32"]), parallel=st.booleans())
def test_laned_extremes_equal_numpy(n, seed, specials, dtype, parallel):
    x = np.random.default_rng(seed).normal(size=n).astype(dtype)
    for at, value in specials:
        x[at % n] = value
    m = np.asarray(x[0] if np.isfinite(x[0]) else 0.5, dtype=dtype)
    got = _run(x, float(m), parallel)
    with np.errstate(all="ignore"):
        d = x - m
        want = {"lo": x.min(), "hi": x.max(), "d": d, "top": np.abs(d).max()}
    for name, w in want.items():
        np.testing.assert_array_equal(got[name].reshape(np.shape(w)), w, err_msg=name)


@pytest.mark.parametrize("position", [0, 1, 2, 3, 4097, 9000])
def test_a_nan_in_any_lane_or_the_remainder_gives_nan(position):
    x = np.arange(9001, dtype=np.float64)
    x[position] = np.nan
    got = _run(x, 0.0, parallel=True)
    assert np.isnan(got["lo"]).all() and np.isnan(got["hi"]).all() and np.isnan(got["top"]).all()
    x[position] = np.inf   # an infinity is an ordinary extreme
    got = _run(x, 0.0, parallel=True)
    assert got["lo"].item() == x.min() and got["hi"].item() == np.inf and got["top"].item() == np.inf


@pytest.mark.parametrize("n", [3, 4, 10_001])
@pytest.mark.parametrize("driver", ["python", "numba"])
def test_a_buffered_element_is_read_before_the_body_writes_it(n, driver):
    # found by test_driver's random programs: the max of `a` shares a kernel with a masked
    # write of `a` later in the body; the buffer must take the element where the body read
    # it, not after the write (a buffered chunk, lanes.buffered_chunk)
    import io
    from contextlib import redirect_stdout

    from fusionlab.capture import capture
    from fusionlab.pipeline.runner import run

    source = (f"import numpy as np\na = np.random.default_rng(0).random({n}) + 0.5\n"
              "v2 = a / (np.abs(a) + 1.0)\nv3 = a.max()\na[a > 1.0] = 0.25\nv9 = a / (np.abs(a) + 1.0)\n")
    with redirect_stdout(io.StringIO()):
        cap = capture(source, {})
    r = run(cap, "greedy", check=True, cache=CACHE, min_size=0, driver=driver)
    assert r.max_abs_error == 0.0
    want: dict = {}
    exec(source, want)
    assert float(r.values["v3"]) == float(want["v3"])
    kernels = [b.kernel.source for p in r.plans for b in p.blocks if b.kernel is not None]
    assert any("_buf[i0 - acc_lo] = " in k for k in kernels), kernels   # the buffered form ran
