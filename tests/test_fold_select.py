"""Filter-folds as selects (issue 13, shared machine; ``emit.fold_select``): a fold of
a filter sharing its kernel adds ``val if keep else -0.0`` (the identity for the other
folds) instead of branching on the mask, so LLVM vectorises the loop; the accumulator
sees exactly the values the branch gave it."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from fusionlab import parse
from fusionlab.backend.numba.codegen import get_kernel
from fusionlab.backend.numba.plan import plan, run_plan
from fusionlab.runtime.reference import Externals, Storage

from agreement import CACHE
from numba_threads import threads

TWO = numba.config.NUMBA_NUM_THREADS >= 2
PROGRAM = """
ARRAY X {t}[{n}]
ARRAY M bool[{n}]
ARRAY Y {t}[{k}]
ARRAY S {o}[]
ARRAY T {t}[]
{cmp} M, X, 0
COMPRESS Y, X, M
DEL M
{fold} S, Y
ADD_REDUCE T, X
DEL Y
SYNC S
SYNC T
"""
FOLDS = {"ADD_REDUCE": np.add, "MULTIPLY_REDUCE": np.multiply, "MAXIMUM_REDUCE": np.maximum,
         "MINIMUM_REDUCE": np.minimum}




def _data(dtype: str, n: int, kind: str, fold: str) -> np.ndarray:
    rng = np.random.default_rng(n)
    if np.dtype(dtype).kind in "iu":
        return rng.integers(-5, 6, n).astype(dtype)
    x = rng.normal(0.0, 1.0, n)
    if fold == "MULTIPLY_REDUCE":
        x = np.where(rng.random(n) < 0.5, -1.0, 1.0) * (1 + rng.random(n) * 1e-3)   # no overflow
    if kind == "special" and n >= 8:
        x[[1, 3, n // 2, n - 1]] = [np.nan, -0.0, np.inf, -np.inf]
    if kind == "zeros":
        x[:] = -0.0
        x[n // 2:] = 0.0
    return x.astype(dtype)


def _program(x: np.ndarray, fold: str, cmp: str):  # type: ignore[no-untyped-def]
    with np.errstate(invalid="ignore"):
        k = int(np.count_nonzero(getattr(np, cmp.lower())(x, 0)))
    out = "int64" if x.dtype.kind == "i" and fold in ("ADD_REDUCE", "MULTIPLY_REDUCE") else x.dtype.name
    return parse(PROGRAM.format(t=x.dtype.name, n=x.size, k=k, o=out, cmp=cmp, fold=fold))


def test_a_fused_filter_fold_is_a_select_and_a_compacted_one_keeps_its_length_guard():
    x = _data("float64", 10000, "random", "ADD_REDUCE")
    p = _program(x, "ADD_REDUCE", "GREATER")
    src = get_kernel(p, range(len(p))).source
    assert "acc4 = acc4 + (acc2_val if acc2_keep else np.float64(-0.0))" in src and "if acc2_keep:" not in src
    p = _program(x, "MAXIMUM_REDUCE", "GREATER")
    assert "(acc2_val if acc2_keep else np.float64(-np.inf))" in get_kernel(p, range(len(p))).source
    # int32 summed in int64: the element is not the accumulator's dtype, the branch stays
    p = _program(x.astype(np.int32), "ADD_REDUCE", "GREATER")
    assert "if acc2_keep: acc4 = acc4 + acc2_val" in get_kernel(p, range(len(p))).source
    # the fold in a block of its own reads the compacted output under a length guard: no select
    guarded = get_kernel(_program(x, "ADD_REDUCE", "GREATER"), [3, 4, 5, 6, 7]).source
    assert "if (i0) < np.uint64(Y.shape[0]): acc4 = acc4 + Y[(i0)]" in guarded and "else np." not in guarded


@pytest.mark.parametrize("n", [1, 7, 4096, 10001])
@pytest.mark.parametrize("kind", ["random", "special", "zeros"])
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64"])
@pytest.mark.parametrize("fold", list(FOLDS))
@pytest.mark.parametrize("cmp", ["GREATER", "LESS_EQUAL"])
def test_select_folds_equal_numpy(n, kind, dtype, fold, cmp):
    x = _data(dtype, n, kind, fold)
    p = _program(x, fold, cmp)
    with np.errstate(invalid="ignore"):
        sel = x[getattr(np, cmp.lower())(x, 0)]
        if not sel.size and fold in ("MAXIMUM_REDUCE", "MINIMUM_REDUCE"):
            return   # max/min of nothing: NumPy raises (capture records no such fold)
        want = FOLDS[fold].reduce(sel, dtype=np.int64 if dtype == "int64" else None)
    for k in ([1, 2] if TWO else [1]):
        with threads(k):
            got = run_plan(plan(p, [list(range(len(p)))], min_size=0), Storage({"X": x.copy()}), Externals(), CACHE)
        s = np.asarray(got["S"]).reshape(())
        if np.isnan(want):
            assert np.isnan(s)
        elif not np.isfinite(want):
            assert s == want
        elif fold in ("MAXIMUM_REDUCE", "MINIMUM_REDUCE") or dtype == "int64":
            assert s == want   # (the sign of a zero: the kernels' max/min and sums start as before, unchanged here)
        else:   # sums and products reassociated (fastmath reassoc): within the summation bound
            eps = float(np.finfo(dtype).eps)
            scale = np.abs(sel.astype(np.float64)).sum() if fold == "ADD_REDUCE" else abs(float(want))
            assert abs(float(s) - float(want)) <= 2 * max(n, 1) * eps * scale
