"""Float64 ``exp`` and ``log`` in kernels are polynomials the loop vectorises
(``fusionlab.backend.numba.vmath``): kernels call ``_vexp``/``_vlog`` for float64 and libm for
float32; their values are within 1 ULP of NumPy's and equal to them at the special values
(NaN, infinities, signed zeros, overflow, subnormals, underflow to zero, negatives), under
serial and parallel kernels, inside a fused reduction, and through ``run`` on captured
code; the compiled loops are vectorised."""

from __future__ import annotations

import io
from contextlib import redirect_stdout

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fusionlab import parse
from fusionlab.capture import capture
from fusionlab.backend.numba.codegen import get_kernel
from fusionlab.backend.numba.vmath import EXP_HELPER, LOG_HELPER
from fusionlab.backend.numba.plan import plan, run_plan
from fusionlab.runtime.reference import Externals, Storage
from fusionlab.pipeline.runner import run

from test_numba import CACHE

SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 709.78, 709.7827128933841, 709.79, 710.0, -708.39, -708.4,
           -740.0, -745.13, -745.14, -1000.0, -1000.5, 1000.5, 1e-310, -1e-310, 5e-324, 1e300, -1e300]


LOG_SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 5e-324, 1e-310, 2.2250738585072014e-308,
               2.225e-308, 1.7976931348623157e308, 0.5, 2.0, 1.0000000000000002, 0.9999999999999999, -1e-310]


def _program(n: int, dtype: str = "float64", op: str = "EXP") -> str:
    # the function's values stored, and their sum: a map and a reduction in one kernel
    return (f"ARRAY x {dtype}[{n}]\nARRAY y {dtype}[{n}]\nARRAY s {dtype}[]\n"
            f"{op} y, x\nADD_REDUCE s, y, axis=None\nSYNC y\nSYNC s\n")


def _run(x: np.ndarray, parallel: bool, op: str = "EXP") -> dict[str, np.ndarray]:
    program = parse(_program(x.size, x.dtype.name, op))
    p = plan(program, [list(range(len(program)))], min_size=0 if parallel else 1 << 40)
    assert p.blocks[0].kernel is not None, p.blocks[0].reason
    return run_plan(p, Storage({"x": x}), Externals(), CACHE)


def _within_one_ulp(got: np.ndarray, want: np.ndarray, ulps: int = 1) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        return (got == want) | (np.isnan(got) & np.isnan(want)) | (np.abs(got - want) <= ulps * np.spacing(np.abs(want)))


def test_float64_exp_calls_the_polynomial_and_float32_calls_libm():
    f64 = get_kernel(parse(_program(1000)), [0, 1, 2, 3]).source
    assert "y[i0] = _vexp(x[i0])" in f64 and "np.exp(" not in f64
    assert "def _vexp(d):" in f64 and "from fusionlab.backend.numba.intrinsics import float64_from_bits" in f64
    f32 = get_kernel(parse(_program(1000, "float32")), [0, 1, 2, 3]).source
    assert "np.exp(" in f32 and "_vexp" not in f32
    log64 = get_kernel(parse(_program(1000, op="LOG")), [0, 1, 2, 3]).source
    assert "y[i0] = _vlog(x[i0])" in log64 and "def _vlog(x):" in log64 and "_vexp" not in log64
    assert "np.log(" in get_kernel(parse(_program(1000, "float32", "LOG")), [0, 1, 2, 3]).source


@pytest.mark.parametrize("parallel", [False, True])
def test_log_special_values_are_numpys(parallel):
    x = np.array(LOG_SPECIAL * 3)
    got = _run(x, parallel, "LOG")["y"].reshape(x.shape)
    with np.errstate(all="ignore"):
        want = np.log(x)
    exact = np.isnan(want) | np.isinf(want) | (want == 0)
    assert np.array_equal(got[exact], want[exact], equal_nan=True), (x[exact], got[exact], want[exact])
    assert _within_one_ulp(got, want).all(), (x, got - want)


@settings(max_examples=40, deadline=None)
@given(n=st.sampled_from([1, 3, 8, 9, 4097, 20_001]), decades=st.sampled_from([0.01, 1.0, 30.0, 300.0]),
       seed=st.integers(0, 2**16), parallel=st.booleans(),
       specials=st.lists(st.tuples(st.integers(0, 10**6), st.sampled_from(LOG_SPECIAL)), max_size=4))
def test_log_kernels_equal_numpy_within_one_ulp(n, decades, seed, parallel, specials):
    x = 10.0 ** np.random.default_rng(seed).uniform(-decades, decades, n)   # positive, many magnitudes
    for at, value in specials:
        x[at % n] = value
    got = _run(x, parallel, "LOG")
    with np.errstate(all="ignore"):
        y = np.log(x)
    assert _within_one_ulp(got["y"].reshape(n), y).all()


@pytest.mark.parametrize("parallel", [False, True])
def test_special_values_are_numpys(parallel):
    x = np.array(SPECIAL * 3)
    got = _run(x, parallel)["y"].reshape(x.shape)
    with np.errstate(over="ignore"):
        want = np.exp(x)
    exact = np.isnan(want) | np.isinf(want) | (want == 0) | (want == 1)
    assert np.array_equal(got[exact], want[exact], equal_nan=True), (x[exact], got[exact], want[exact])
    assert _within_one_ulp(got, want).all(), (x, got - want)
    assert not np.signbit(got[want == 0]).any()   # exp never gives -0.0


@settings(max_examples=40, deadline=None)
@given(n=st.sampled_from([1, 2, 3, 7, 8, 9, 4095, 4097, 20_001]), scale=st.sampled_from([1.0, 30.0, 700.0, 760.0]),
       seed=st.integers(0, 2**16), parallel=st.booleans(),
       specials=st.lists(st.tuples(st.integers(0, 10**6), st.sampled_from(SPECIAL)), max_size=4))
def test_exp_kernels_equal_numpy_within_one_ulp(n, scale, seed, parallel, specials):
    x = np.random.default_rng(seed).uniform(-scale, scale, n)
    for at, value in specials:
        x[at % n] = value
    got = _run(x, parallel)
    with np.errstate(over="ignore"):
        y = np.exp(x)
    assert _within_one_ulp(got["y"].reshape(n), y).all()
    s = float(got["s"].reshape(()))
    with np.errstate(over="ignore"):
        want = float(np.sum(y))
    if np.isfinite(want):   # a sum of positives in another order: a few ulps per term
        assert abs(s - want) <= 4 * n * np.finfo(float).eps * want
    else:
        assert s == want or (np.isnan(s) and np.isnan(want))


@pytest.mark.parametrize("helper, name, fn", [(EXP_HELPER, "_vexp", np.exp), (LOG_HELPER, "_vlog", np.log)])
def test_the_compiled_loop_is_vectorised(helper, name, fn):
    ns: dict = {}
    exec(helper, ns)
    call = ns[name]

    @numba.njit(error_model="numpy", fastmath={"reassoc"})
    def loop(x, y):  # the serial kernel's shape: a loop calling the helper
        for i in range(x.size):
            y[i] = call(x[i])

    x = np.linspace(0.01, 5.0, 1001)
    y = np.empty_like(x)
    loop(x, y)
    ir = "".join(loop.inspect_llvm().values())
    assert any(f"<{w} x double>" in ir for w in (2, 4, 8)), f"the loop calling {name} was not vectorised"
    libm = fn.__name__
    assert f"@{libm}(" not in ir and f"llvm.{libm}" not in ir   # no libm call left
    assert _within_one_ulp(y, fn(x)).all()


def test_captured_code_under_run_equals_numpy():
    src = ("import numpy as np\n"
           "x = np.linspace(-800.0, 800.0, 100_003)\n"
           "z = 1.0 / (1.0 + np.exp(-x))\n"   # a sigmoid: exp overflows to inf for x < -709.78
           "w = np.exp(x - x.max())\n"
           "v = np.log(np.abs(x) + 1e-300)\n"   # x = 0 among them: log(1e-300)
           "t = float(w.sum() + v.sum())\n")
    with redirect_stdout(io.StringIO()), np.errstate(over="ignore"):
        cap = capture(src, {})
        got = run(cap, check=True, cache=CACHE)
        plain: dict = {}
        exec(src, plain)
    assert got.check is not None and got.check.ok, got.check
    # exp within 1 ULP; the sigmoid's sum and division round its error once more each
    for name, ulps in (("z", 2), ("w", 1), ("v", 2)):
        assert _within_one_ulp(np.asarray(got.values[name]), plain[name], ulps).all(), name
