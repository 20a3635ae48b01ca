"""Kernels compute in the dtypes NumPy 2 would (NEP 50): differential tests over dtype x
opcode x scalar operand, kernel against plain NumPy; exact for integers, booleans and the
correctly rounded float operations, a few units in the last place for math functions."""

from __future__ import annotations

import io
import warnings
from contextlib import redirect_stdout

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from fusionlab import parse
from fusionlab.capture import capture
from fusionlab.backend.numba.codegen import get_kernel, loop_dtypes
from fusionlab.runtime.check import ULPS, check_namespace, compare_values, plain_namespace
from fusionlab.backend.numba.plan import plan, run_plan
from fusionlab.runtime.reference import Externals, Storage, run_reference
from fusionlab.pipeline.runner import run

from test_numba import CACHE

DTYPES = ["bool", "int8", "int32", "int64", "uint8", "uint32", "float32", "float64"]
# IEEE operations are correctly rounded: computed in the same dtype they are bit-identical
EXACT = ["add", "subtract", "multiply", "divide", "maximum", "minimum", "less", "greater_equal", "equal",
         "not_equal", "logical_and", "logical_or", "bitwise_and", "bitwise_or", "floor_divide", "remainder"]
MATH = ["power", "arctan2", "hypot"]
UNARY_EXACT = ["negative", "absolute", "square", "sqrt", "sign", "logical_not", "invert", "floor", "rint"]
UNARY_MATH = ["exp", "log1p", "sin", "tanh"]

N = 64


def _array(draw: st.DrawFn, dtype: str) -> np.ndarray:
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return np.array(draw(st.lists(st.booleans(), min_size=N, max_size=N)))
    if dt.kind in "iu":
        info = np.iinfo(dt)
        lo, hi = max(int(info.min), -1000), min(int(info.max), 1000)
        edges = [int(info.min), int(info.max), 0, 1, -1 if info.min < 0 else 2]
        values = draw(st.lists(st.one_of(st.integers(lo, hi), st.sampled_from(edges)), min_size=N, max_size=N))
        return np.array(values, dtype=dt)
    values = draw(st.lists(st.one_of(st.floats(-1e3, 1e3, width=32), st.sampled_from([0.0, -0.0, 1.5, 0.1])),
                           min_size=N, max_size=N))
    return np.array(values, dtype=dt)


@st.composite
def scalars(draw: st.DrawFn) -> bool | int | float:
    return draw(st.one_of(st.booleans(), st.integers(-300, 300), st.sampled_from([0, 2, -3, 7]),
                          st.floats(-100, 100, allow_nan=False), st.sampled_from([0.1, 0.2, 2.5, -0.5, 0.0]),
                          st.sampled_from([float("nan"), float("inf")])))


def _literal(x: bool | int | float) -> str:
    return repr(x) if not isinstance(x, float) or np.isfinite(x) else ("nan" if x != x else "inf")


def _kernel_result(text: str, inputs: dict[str, np.ndarray], min_size: int) -> dict[str, np.ndarray]:
    program = parse(text)
    p = plan(program, [list(range(len(program)))], min_size=min_size)
    assert p.blocks[0].kernel is not None, p.blocks[0].reason
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # a kernel Numba refuses would fall back silently otherwise
        return run_plan(p, Storage(inputs), Externals(), CACHE)


def _oracle(fn, *args):  # type: ignore[no-untyped-def]
    """Plain NumPy's result, or None when NumPy refuses (then capture would have raised)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            with np.errstate(all="ignore"):
                return np.asarray(fn(*args))
        except (TypeError, ValueError, OverflowError):
            return None


def _assert_matches(got: np.ndarray, want: np.ndarray, exact: bool, what: str) -> None:
    assert got.dtype == want.dtype, (what, got.dtype, want.dtype)
    if exact or want.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want, err_msg=what)
    else:
        report = compare_values(got, want)
        assert report.ok, (what, [str(m) for m in report.mismatches])


def _binary_program(ufunc: str, a_dtype: str, right: str, out_dtype: str, b_dtype: str | None = None) -> str:
    b = f"ARRAY B {b_dtype}[{N}]\n" if b_dtype else ""
    # T is contracted (a scalar local of the kernel), C receives it: the kernel's own local
    # has to carry NumPy's dtype too
    return (f"ARRAY A {a_dtype}[{N}]\n{b}ARRAY T {out_dtype}[{N}]\nARRAY C {out_dtype}[{N}]\n"
            f"{ufunc.upper()} T, A, {right}\nCOPY C, T\nDEL T\nSYNC C\n")


@settings(max_examples=60, deadline=None)
@given(data=st.data(), ufunc=st.sampled_from(EXACT + MATH), dtype=st.sampled_from(DTYPES), scalar=scalars(),
       parallel=st.booleans())
def test_array_with_python_scalar_as_numpy(data, ufunc, dtype, scalar, parallel):
    a = _array(data.draw, dtype)
    want = _oracle(getattr(np, ufunc), a, scalar)
    assume(want is not None and want.dtype.kind in "biuf" and want.dtype != np.float16)
    text = _binary_program(ufunc, dtype, _literal(scalar), want.dtype.name)
    got = _kernel_result(text, {"A": a}, 0 if parallel else 1 << 30)["C"]
    _assert_matches(got, want, ufunc in EXACT, f"np.{ufunc}({dtype} array, {scalar!r})")
    # the reference executor computes in the same loop (bytecode.loop_dtypes decides both)
    ref = run_reference(parse(text), inputs={"A": a})["C"]
    _assert_matches(ref, want, True, f"reference np.{ufunc}({dtype} array, {scalar!r})")


@settings(max_examples=40, deadline=None)
@given(data=st.data(), ufunc=st.sampled_from(EXACT + MATH), a_dtype=st.sampled_from(DTYPES),
       b_dtype=st.sampled_from(DTYPES))
def test_two_arrays_of_mixed_dtypes_as_numpy(data, ufunc, a_dtype, b_dtype):
    a, b = _array(data.draw, a_dtype), _array(data.draw, b_dtype)
    want = _oracle(getattr(np, ufunc), a, b)
    assume(want is not None and want.dtype.kind in "biuf" and want.dtype != np.float16)
    text = _binary_program(ufunc, a_dtype, "B", want.dtype.name, b_dtype)
    got = _kernel_result(text, {"A": a, "B": b}, 1 << 30)["C"]
    _assert_matches(got, want, ufunc in EXACT, f"np.{ufunc}({a_dtype}, {b_dtype})")


@settings(max_examples=30, deadline=None)
@given(data=st.data(), ufunc=st.sampled_from(UNARY_EXACT + UNARY_MATH), dtype=st.sampled_from(DTYPES))
def test_unary_as_numpy(data, ufunc, dtype):
    a = _array(data.draw, dtype)
    want = _oracle(getattr(np, ufunc), a)
    assume(want is not None and want.dtype.kind in "biuf" and want.dtype != np.float16)
    text = (f"ARRAY A {dtype}[{N}]\nARRAY T {want.dtype.name}[{N}]\nARRAY C {want.dtype.name}[{N}]\n"
            f"{ufunc.upper()} T, A\nCOPY C, T\nDEL T\nSYNC C\n")
    got = _kernel_result(text, {"A": a}, 1 << 30)["C"]
    _assert_matches(got, want, ufunc in UNARY_EXACT, f"np.{ufunc}({dtype})")


@pytest.mark.parametrize("dtype, want", [("int8", "int64"), ("int32", "int64"), ("uint8", "uint64"),
                                         ("bool", "int64"), ("float32", "float32"), ("float64", "float64")])
def test_sum_accumulates_in_numpys_dtype(dtype, want):
    # NumPy sums small integers and bools in the platform's int64 (uint64 for unsigned);
    # float32 stays float32
    a = np.arange(5000).astype(dtype) if dtype != "bool" else np.arange(5000) % 3 == 0
    assert np.sum(a).dtype == np.dtype(want)
    text = f"ARRAY A {dtype}[5000]\nARRAY S {want}[]\nADD_REDUCE S, A, axis=None\nSYNC S\n"
    got = _kernel_result(text, {"A": a}, 0)["S"]
    assert got.dtype == np.dtype(want)
    report = compare_values(got.reshape(())[()], np.sum(a), terms=5000)  # the scalar NumPy gives
    assert report.ok, [str(m) for m in report.mismatches]


def test_integer_overflow_division_and_modulo_as_numpy():
    a = np.array([127, -128, 7, -7, 5, 0, -1, 100], dtype=np.int8)
    b = np.array([1, -1, 2, 2, 0, 0, -3, -7], dtype=np.int8)
    for ufunc in ("add", "multiply", "floor_divide", "remainder", "subtract"):
        with np.errstate(all="ignore"):
            want = getattr(np, ufunc)(a, b)
        text = _binary_program(ufunc, "int8", "B", want.dtype.name, "int8").replace(f"[{N}]", "[8]")
        got = _kernel_result(text, {"A": a, "B": b}, 1 << 30)["C"]
        np.testing.assert_array_equal(got, want, err_msg=ufunc)
        assert got.dtype == want.dtype


def test_true_division_of_ints_and_bool_arithmetic():
    a, b = np.array([1, -7, 0, 9], dtype=np.int32), np.array([2, 2, 0, -4], dtype=np.int32)
    with np.errstate(all="ignore"):
        want = a / b   # float64, with nan and inf
    got = _kernel_result(_binary_program("divide", "int32", "B", "float64", "int32").replace(f"[{N}]", "[4]"),
                         {"A": a, "B": b}, 1 << 30)["C"]
    np.testing.assert_array_equal(got, want)
    p, q = np.array([True, True, False, False]), np.array([True, False, True, False])
    got = _kernel_result(_binary_program("add", "bool", "B", "bool", "bool").replace(f"[{N}]", "[4]"),
                         {"A": p, "B": q}, 1 << 30)["C"]
    np.testing.assert_array_equal(got, p + q)   # logical or, a bool
    assert got.dtype == np.bool_


def test_float32_literals_are_typed_in_the_kernel():
    program = parse("ARRAY A float32[100]\nARRAY T float32[100]\nARRAY C float32[100]\n"
                    "MULTIPLY T, A, 0.2\nADD C, T, 1\nDEL T\nSYNC C")
    k = get_kernel(program, [0, 1, 2])
    # the float literal is an argument (c0 = 0.2: KernelSource.constants), typed as NumPy's loop
    assert "np.float32(c0)" in k.source and "# c0 = 0.2" in k.source and k.constants == (0.2,)
    assert "np.float32(1)" in k.source
    assert [d.name for d in loop_dtypes(program[0])] == ["float32"] * 3


HEAT32 = """
import numpy as np
u = np.zeros((66, 66), dtype=np.float32)
u[0, :] = 1.0
for _ in range(40):
    u[1:-1, 1:-1] = u[1:-1, 1:-1] + 0.1 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:]
                                           - 4 * u[1:-1, 1:-1])
total = u.sum()
"""


@pytest.mark.parametrize("driver", ["python", "numba"])
def test_float32_heat_equation_matches_numpy(driver):
    # issue 13: differed by 4.6e-05 under run --check; now each step is NumPy's float32 arithmetic
    with redirect_stdout(io.StringIO()):
        cap = capture(HEAT32, {})
    r = run(cap, "greedy", cache=CACHE, min_size=0, driver=driver)
    plain = plain_namespace(HEAT32)
    assert r.values["u"].dtype == np.float32
    np.testing.assert_array_equal(r.values["u"], plain["u"])   # bit for bit: no reduction in the steps
    report = check_namespace(r.values, plain, terms=66 * 66)
    assert report.ok, [str(m) for m in report.mismatches]
    assert ULPS * np.finfo(np.float32).eps < 1e-5


def test_most_negative_integer_divided_by_minus_one_wraps_instead_of_trapping():
    # compiled a // b traps (SIGFPE: the process dies) for INT64_MIN // -1; NumPy wraps
    a = np.array([np.iinfo(np.int64).min, -9, 9], dtype=np.int64)
    b = np.array([-1, -1, 0], dtype=np.int64)
    for ufunc in ("floor_divide", "remainder"):
        with np.errstate(all="ignore"):
            want = getattr(np, ufunc)(a, b)
        text = _binary_program(ufunc, "int64", "B", "int64", "int64").replace(f"[{N}]", "[3]")
        got = _kernel_result(text, {"A": a, "B": b}, 1 << 30)["C"]
        np.testing.assert_array_equal(got, want, err_msg=ufunc)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_float_floor_divide_is_numpys_divmod_quotient(dtype):
    # 1 // 0.1 is 9 in NumPy (the quotient of divmod: 0.1 is slightly above one tenth);
    # Numba's np.floor_divide of floats gives floor(1 / 0.1) = 10 (hypothesis found it)
    a = np.array([1.0, -1.0, 0.0, -0.0, np.inf, 7.5, 1.0, np.nan] * (N // 8), dtype=dtype)
    b = np.array([0.1, 0.1, -0.1, 0.3, 2.0, -0.7, 0.0, 1.0] * (N // 8), dtype=dtype)
    with np.errstate(all="ignore"):
        want = np.floor_divide(a, b)
    for min_size in (0, 1 << 30):   # parallel and serial kernels
        got = _kernel_result(_binary_program("floor_divide", dtype, "B", dtype, dtype), {"A": a, "B": b}, min_size)["C"]
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
