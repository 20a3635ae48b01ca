"""``x ** e`` for a literal half-integer ``e`` (``codegen_emit.HALF_POWERS``) is computed with
``sqrt`` in the kernels, not a scalar ``pow`` call: checked against NumPy on ordinary and
special values (signed zeros, infinities, nan, negatives, the extremes of the dtype)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fusionlab import parse
from fusionlab.codegen import get_kernel
from fusionlab.execute.check import compare_values
from fusionlab.execute.numba_backend import plan, run_plan
from fusionlab.execute.reference import Externals, Storage

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


def test_other_exponents_and_integer_arrays_keep_the_power_operator():
    """Other float exponents keep ``**``; integer arrays take the table's exact integer
    power (``_ipow``, docs/semantics.md "Per-opcode facts"), never the square-root forms."""
    float_program = parse(_program("float64", 2.5, 8))
    assert "**" in get_kernel(float_program, list(range(len(float_program))), parallel=False).source
    int_program = parse("ARRAY A int64[8]\nARRAY C int64[8]\nPOWER C, A, 2\nSYNC C\n")
    source = get_kernel(int_program, list(range(len(int_program))), parallel=False).source
    assert "_ipow(A[i0], np.int64(2), np.int64(1))" in source and "sqrt" not in source
