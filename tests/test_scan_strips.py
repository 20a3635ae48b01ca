"""Strip-mined serial scans (issue 13, shared machine; fusionlab.backend.numba.strip): the maps
feeding a one-dimensional scan run strip by strip in a loop of their own, which LLVM
vectorises, with float64 sine and cosine as polynomials there (libm's calls where a strip
holds an argument beyond 2**24, inf or NaN); the scan and its consumers follow from the
strip's buffer in NumPy's order."""

from __future__ import annotations

import contextlib
import io

import numba
import numpy as np
import pytest

from fusionlab import parse
from fusionlab.capture import capture
from fusionlab.backend.numba.codegen import get_kernel
from fusionlab.backend.numba.strip import FAR, STRIP, TRIG_HELPERS
from fusionlab.backend.numba.driver import Driver
from fusionlab.backend.numba.plan import plan, run_plan
from fusionlab.runtime.reference import Externals, Storage
from fusionlab.pipeline.runner import run

from kernels import planned

from agreement import CACHE
from numba_threads import threads

U = np.finfo(np.float64).eps / 2
TWO = numba.config.NUMBA_NUM_THREADS >= 2
HELPERS: dict = {}
exec(TRIG_HELPERS, HELPERS)
_VSIN, _VCOS = HELPERS["_vsin"], HELPERS["_vcos"]


@numba.njit(error_model="numpy")
def _vtrig(x, out_sin, out_cos):  # type: ignore[no-untyped-def]
    for i in range(x.shape[0]):
        out_sin[i] = _VSIN(x[i])
        out_cos[i] = _VCOS(x[i])




def _ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    return np.abs(got - want) / np.spacing(np.abs(want))


@pytest.mark.parametrize("lo,hi", [(0.0, 1.0), (-10.0, 10.0), (-1e4, 1e4), (-FAR, FAR)])
def test_the_polynomial_sine_and_cosine_are_within_two_ulp_of_libm(lo, hi):
    x = np.random.default_rng(int(hi)).uniform(lo, hi, 200_000)
    s, c = np.empty_like(x), np.empty_like(x)
    _vtrig(x, s, c)
    assert _ulps(s, np.sin(x)).max() <= 2 and _ulps(c, np.cos(x)).max() <= 2


def test_the_polynomials_at_multiples_of_half_pi_and_signed_zeros():
    k = np.arange(-20000, 20000, dtype=np.float64)
    x = np.concatenate([k * np.pi, k * np.pi / 2, np.nextafter(k * np.pi, np.inf), [0.0, -0.0, 5e-324, -1e-310]])
    s, c = np.empty_like(x), np.empty_like(x)
    _vtrig(x, s, c)
    # near a zero of sin (cos) the reduction's four parts of pi keep the relative error too
    assert _ulps(s, np.sin(x)).max() <= 2 and _ulps(c, np.cos(x)).max() <= 2
    assert np.signbit(s[-3]) and not np.signbit(s[-4]) and s[-1] == -1e-310 and c[-3] == 1.0


def test_the_range_test_sends_far_arguments_inf_and_nan_to_libm():
    far = HELPERS["_trig_far"]
    assert [far(v) for v in (0.0, -FAR, FAR, np.nextafter(FAR, np.inf), 1e300, np.inf, -np.inf, np.nan)] \
        == [0, 0, 0, 1, 1, 1, 1, 1]


SCAN = """
ARRAY X {t}[{n}]
ARRAY T {t}[{n}]
ARRAY U {t}[{n}]
ARRAY C {t}[{n}]
ARRAY D {t}[{n}]
{f} T, X
MULTIPLY U, T, 2.0
DEL T
ADD_ACCUMULATE C, U, axis=0
DEL U
MULTIPLY D, C, 0.5
{keep}
SYNC D
"""


def _program(dtype: str = "float64", n: int = 10000, f: str = "SIN", stored: bool = True):  # type: ignore[no-untyped-def]
    return parse(SCAN.format(t=dtype, n=n, f=f, keep="SYNC C" if stored else "DEL C"))


def _want(x: np.ndarray, f: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """NumPy's C and D, and the scanned terms."""
    with np.errstate(invalid="ignore"):
        t = getattr(np, f.lower())(x) * x.dtype.type(2.0)
    c = np.cumsum(t, dtype=x.dtype)
    return c, c * x.dtype.type(0.5), t


def _run(p, x: np.ndarray) -> dict[str, np.ndarray]:  # type: ignore[no-untyped-def]
    return run_plan(plan(p, [list(range(len(p)))], min_size=0), Storage({"X": x.copy()}), Externals(), CACHE)


def test_the_serial_form_strip_mines_the_maps_and_vectorises_sine_with_a_libm_fallback():
    k = get_kernel(_program(), range(len(_program())))
    serial, chunked = k.source.split("else:  # threads")
    assert "for acc_st in range(" in serial and f"np.empty({STRIP}, dtype=np.float64)" in serial
    maps, fallback, scan = serial.split("for i0 in range(acc_s0, acc_s1):")[1:]
    assert "_vsin(X[i0])" in maps and "far |= _trig_far(X[i0])" in maps and "ADD_ACCUMULATE" not in maps
    assert "np.sin(X[i0])" in fallback and "_vsin" not in fallback
    assert "acc" in scan and "ADD_ACCUMULATE" in scan and "sin" not in scan
    assert "def _vsin(d):" in k.source
    # the chunked form's pass 1 (the local scan stored) strips each chunk alike; pass 2 reads C
    first, second = chunked.split("pass 2")
    assert "_vsin(X[i0])" in first and "for acc_st in range((acc_hi - chunk * u4096 + u511) // u512)" in first
    assert "sin" not in second
    # with C contracted, pass 1 only totals and pass 2 recomputes the maps: both in strips
    # (with libm's scalar sine twice, 2,000,000 elements took 17.7 ms on two threads, 4.2 on one)
    p = _program(stored=False)
    chunked = get_kernel(p, range(len(p))).source.split("else:  # threads")[1]
    first, second = chunked.split("pass 2")
    for one_pass in (first, second):
        assert "_vsin(X[i0])" in one_pass and "for acc_st in range((acc_hi - chunk * u4096 + u511) // u512)" in one_pass
        assert "np.sin(X[i0])" in one_pass.split("if acc_far:")[1]   # the libm fallback of a far strip
    assert "MULTIPLY D" not in first and "MULTIPLY D" in second   # the consumers run once, in pass 2


def test_float32_and_integer_maps_are_strip_mined_without_polynomials():
    p = _program("float32")
    src = get_kernel(p, range(len(p))).source
    assert "for acc_st in range(" in src and "_vsin" not in src and "np.float32" in src
    p = _program("int64", f="NEGATIVE")
    src = get_kernel(p, range(len(p))).source
    assert "for acc_st in range(" in src and "_trig_far" not in src and "np.empty(512, dtype=np.int64)" in src


def test_a_consumer_reading_a_map_keeps_the_one_pass_form():
    # the sine is read again after the scan: it would need a second buffer, the loop stays one pass
    p = parse("ARRAY X float64[10000]\nARRAY T float64[10000]\nARRAY C float64[10000]\nARRAY D float64[10000]\n"
              "SIN T, X\nADD_ACCUMULATE C, T, axis=0\nADD D, C, T\nDEL T\nDEL C\nSYNC D")
    k = get_kernel(p, range(len(p)))
    assert "for acc_st in range(" not in k.source and "_vsin" not in k.source
    x = np.random.default_rng(3).random(10000)
    with threads(1):
        np.testing.assert_array_equal(_run(p, x)["D"], np.cumsum(np.sin(x)) + np.sin(x))


def _inputs(kind: str, n: int, dtype: str) -> np.ndarray:
    rng = np.random.default_rng(n)
    if np.dtype(dtype).kind == "i":
        return rng.integers(-1000, 1000, n).astype(dtype)
    x = rng.uniform(-50, 50, n)
    if kind == "special" and n >= 5:   # strips with far arguments, inf and nan: libm's values there
        x[[1, n // 2 + 1, n - 2, n - 1]] = [1e30, -4 * FAR, np.nan, np.inf]
    if kind == "zeros":
        x[::3] = -0.0
    return x.astype(dtype)


@pytest.mark.parametrize("n", [1, 5, STRIP, STRIP + 1, 10000])
@pytest.mark.parametrize("kind", ["random", "special", "zeros"])
@pytest.mark.parametrize("f,dtype", [("SIN", "float64"), ("COS", "float64"), ("SIN", "float32"),
                                     ("NEGATIVE", "int64")])
@pytest.mark.parametrize("stored", [True, False], ids=["stored", "contracted"])
def test_strip_mined_scans_equal_numpy_on_one_thread_and_on_two(n, kind, f, dtype, stored):
    p = _program(dtype, n, f, stored)
    x = _inputs(kind, n, dtype)
    want_c, want_d, t = _want(x, f)
    t = np.abs(t.astype(np.float64))
    eps = float(np.finfo(dtype).eps) / 2 if dtype.startswith("float") else 0.0
    # the terms differ from NumPy's by 2 ulp (the polynomials) and the sums' roundings follow
    bound = 4 * np.arange(1, n + 1) * eps * np.cumsum(np.where(np.isfinite(t), t, 0.0))
    for k in ([1, 2] if TWO else [1]):
        with threads(k):
            got = _run(p, x)
        for name, want in ([("C", want_c)] if stored else []) + [("D", want_d)]:
            g = got[name]
            assert g.dtype == want.dtype
            np.testing.assert_array_equal(np.isnan(g), np.isnan(want))
            fin = np.isfinite(want)
            np.testing.assert_array_equal(g[~fin], want[~fin])
            assert np.all(np.abs(g[fin].astype(np.float64) - want[fin]) <= bound[fin]), (name, k)


def test_an_empty_scan_runs_no_strip():
    p = _program("float64", 1, "SIN")
    k = get_kernel(p, range(len(p)), parallel=False)
    assert "for acc_st in range(" in k.source and "thread_count" not in k.source
    arrays = {"X": np.empty(0), "C": np.empty(0), "D": np.empty(0)}
    CACHE.get(k)(*[arrays[v.base.name] for v in k.arguments], *[np.uint64(0) for _ in k.extent_arguments], *k.constants)
    assert arrays["C"].size == 0


def test_a_captured_cumsum_of_a_strided_sine_equals_numpy_under_the_driver():
    src = ("import numpy as np\nx = np.random.default_rng(0).uniform(-30, 30, 40000)\n"
           "c = np.cumsum(np.sin(x[::2]) * 2.0)\ny = c * 0.5 + 1.0\n")
    with contextlib.redirect_stdout(io.StringIO()):
        cap = capture(src, {})
    plans, inputs, externals = planned(cap, 4096)
    (scan,) = [bp.kernel for p in plans for bp in p.blocks if bp.kernel is not None and "ACCUMULATE" in bp.kernel.source]
    assert "_vsin(" in scan.source
    x = np.random.default_rng(0).uniform(-30, 30, 40000)[::2]
    want = np.cumsum(np.sin(x) * 2.0)
    bound = 4 * np.arange(1, 20001) * U * np.cumsum(np.abs(np.sin(x) * 2.0))
    for k in ([1, 2] if TWO else [1]):
        got = Driver(plans, externals, CACHE, inputs, mode="numba", threads=k)()
        assert np.all(np.abs(got["c"] - want) <= bound) and np.all(np.abs(got["y"] - (want * 0.5 + 1.0)) <= bound)
    r = run(cap, "greedy", check=True, cache=CACHE, driver="numba")
    assert r.check is None or r.check.ok
