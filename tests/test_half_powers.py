"""``x ** e`` for a literal half-integer ``e`` (``power.HALF_POWERS``) is computed with
``sqrt`` in the kernels, and for an integer value from 2 to ``MOST_PRODUCTS`` with products,
not a scalar ``pow`` call: checked against NumPy on ordinary and special values (signed
zeros, infinities, nan, negatives, the extremes of the dtype, results that overflow or
underflow)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fusionlab import parse
from fusionlab.backend.numba.codegen import get_kernel
from fusionlab.runtime.check import compare_values
from fusionlab.backend.numba.plan import plan, run_plan
from fusionlab.runtime.reference import Externals, Storage

from test_numba import CACHE

EXPONENTS = [0.5, -0.5, 1.5, -1.5]


def _special(dtype: str) -> np.ndarray:
    info = np.finfo(dtype)
    return np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -1.0, -2.5, 1.0, 4.0, 0.25, info.tiny, info.max,
                     info.smallest_subnormal, 1e-3, 7.0, 1e6], dtype=dtype)


def _program(dtype: str, e: float, n: int) -> str:
    return (f"ARRAY A {dtype}[{n}]\nARRAY T {dtype}[{n}]\nARRAY C {dtype}[{n}]\n"
            f"POWER T, A, {e!r}\nCOPY C, T\nDEL T\nSYNC C\n")


def _kernel_power(a: np.ndarray, e: float, parallel: bool) -> tuple[np.ndarray, str]:
    program = parse(_program(a.dtype.name, e, a.size))
    p = plan(program, [list(range(len(program)))], min_size=0 if parallel else 1 << 30)
    assert p.blocks[0].kernel is not None, p.blocks[0].reason
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = run_plan(p, Storage({"A": a}), Externals(), CACHE)["C"]
    return got, p.blocks[0].kernel.source


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("e", EXPONENTS)
def test_half_powers_use_sqrt_and_match_numpy_on_special_values(dtype, e):
    a = _special(dtype)
    got, source = _kernel_power(a, e, parallel=False)
    assert "np.sqrt" in source and "**" not in source.split("):", 1)[1]
    with np.errstate(all="ignore"):
        want = a ** e
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))   # +0 and -0 as NumPy gives them
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
    finite = np.isfinite(want) & (np.abs(want) >= np.finfo(dtype).tiny)   # normal results: within ULPS
    report = compare_values(got[finite], want[finite])
    assert report.ok, [str(m) for m in report.mismatches]


@settings(max_examples=30, deadline=None)
@given(e=st.sampled_from(EXPONENTS), dtype=st.sampled_from(["float32", "float64"]),
       values=st.lists(st.floats(min_value=1e-30, max_value=1e30), min_size=1, max_size=40),
       parallel=st.booleans())
def test_half_powers_of_positive_values_match_numpy(e, dtype, values, parallel):
    a = np.array(values, dtype=dtype)
    got, _ = _kernel_power(a, e, parallel)
    report = compare_values(got, a ** e)
    assert report.ok, [str(m) for m in report.mismatches]


INTEGER_EXPONENTS = [2.0, 3.0, 4.0, 5.0, 7.0, 8.0, 3]


def _body(source: str) -> str:
    return source.split("):", 1)[1]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("e", INTEGER_EXPONENTS)
def test_integer_powers_use_products_and_match_numpy_on_special_values(dtype, e):
    info = np.finfo(dtype)
    edge = np.array([info.max ** (1 / float(e)), info.tiny ** (1 / float(e)), 1.5 * info.max ** (1 / float(e)),
                     0.5 * info.tiny ** (1 / float(e)), -(info.max ** (1 / float(e)))], dtype=dtype)
    a = np.concatenate([_special(dtype), edge])
    got, source = _kernel_power(a, e, parallel=False)
    assert "**" not in _body(source) and "pow" not in _body(source) and " * " in _body(source)
    with np.errstate(all="ignore"):
        want = a ** e
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))   # overflow exactly where pow overflows
    finite = np.isfinite(want) & (np.abs(want) >= info.tiny)
    report = compare_values(got[finite], want[finite])
    assert report.ok, [str(m) for m in report.mismatches]


@settings(max_examples=30, deadline=None)
@given(e=st.sampled_from(INTEGER_EXPONENTS), dtype=st.sampled_from(["float32", "float64"]),
       values=st.lists(st.floats(min_value=-1e4, max_value=1e4), min_size=1, max_size=40),
       parallel=st.booleans())
def test_integer_powers_of_any_sign_match_numpy(e, dtype, values, parallel):
    a = np.array(values, dtype=dtype)
    got, _ = _kernel_power(a, e, parallel)
    with np.errstate(all="ignore"):
        want = a ** e
    normal = np.abs(want) >= np.finfo(dtype).tiny   # the subnormal range has fewer digits to compare
    report = compare_values(got[normal], want[normal])
    assert report.ok, [str(m) for m in report.mismatches]
    assert np.array_equal(got[~normal] == 0, want[~normal] == 0) or not (~normal).any() or \
        np.abs(got[~normal] - want[~normal]).max() <= 4 * np.finfo(dtype).smallest_subnormal


def test_other_exponents_and_integer_arrays_keep_the_power_operator():
    """Other float exponents keep ``**``; integer arrays take the table's exact integer
    power (``_ipow``, docs/ir.md "Per-opcode facts"), never the square-root forms."""
    for e in (2.5, -2.0, 9.0, 1.0, 0.0):   # negatives keep pow: 1 / x**n would round a subnormal x**n
        float_program = parse(_program("float64", e, 8))
        assert "**" in _body(get_kernel(float_program, list(range(len(float_program))), parallel=False).source), e
    int_program = parse("ARRAY A int64[8]\nARRAY C int64[8]\nPOWER C, A, 2\nSYNC C\n")
    source = get_kernel(int_program, list(range(len(int_program))), parallel=False).source
    assert "_ipow(A[i0], np.int64(2), np.int64(1))" in source and "sqrt" not in source


@pytest.mark.parametrize("e", [2.5, -2.0, 9.0, 0.0, 1.0, 2.0, 5.0, 8.0, 0.5, -0.5, 1.5, -1.5, 3, 9, -2])
def test_the_time_model_prices_the_form_the_kernel_computes(e):
    """One decision (``opcodes.power_without_pow``): where the kernel keeps ``pow`` (a float
    ``**`` in its body), the time model charges ``exp`` and ``log``; elsewhere it does not."""
    from fusionlab.costs.timemodel import instruction_family

    program = parse(_program("float64", e, 8))
    body = _body(get_kernel(program, list(range(len(program))), parallel=False).source)
    float_pow = "**" in body and not isinstance(e, int)
    assert float_pow == ("exp" in instruction_family(program[0])), (e, body)
