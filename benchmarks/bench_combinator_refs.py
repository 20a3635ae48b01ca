"""Benchmark rows for fused combinators (issue 14): a scan of a map followed by a map, mean and
variance in one pass, row and column sums, Normalize2 (002's filter example) and softmax by
rows. Used by ``bench_backend.py`` like the paper rows of ``bench_backend_refs.py``: each row
is a :class:`~fusionlab.workloads.Workload` (the program fusionlab captures) and a
:class:`~bench_backend_refs.Refs`:

- ``numpy``: the program's own NumPy code, its random input drawn beforehand;
- ``numba``: that function under ``numba.njit(parallel=True)`` (``Refs.numba``; it refuses
  softmax's ``max(axis=1, keepdims=True)``, which the row's notes say);
- ``loop``: a hand-written fused loop: the scan as one serial loop over the map (what a
  person writes; a parallel scan needs two passes), the reductions as ranges of rows in
  parallel with per-range partial results (one contiguous pass over the input); Normalize2's
  two folds in one parallel pass (the filter as a masked add), then its two maps in one;
  softmax one row per parallel iteration (maximum, exponentials and their sum, division).

Every variant returns the program's scalar. ``python benchmarks/bench_combinator_refs.py``
checks them against NumPy at the tiny size (``tests/test_bench_refs.py`` does too).
"""

from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np
from numba import prange

from bench_backend_refs import Refs, numba_refusal
from fusionlab.workloads import Workload

_SOURCE = "fusionlab issue 14 (004 scanomap; 003 eq. 34)"


# --- cumsum of a map followed by a map ----------------------------------------------------


def cumsum_map(n: int = 1000, seed: int = 0) -> float:
    """A running sum of a map, then a map of it (scanomap, 004 §4.1)."""
    import numpy as np

    x = np.random.default_rng(seed).random(n)
    c = np.cumsum(np.sin(x) * 2.0)
    y = c * 0.5 + 1.0
    return float(y[-1])


def cumsum_numpy(x):  # type: ignore[no-untyped-def]
    c = np.cumsum(np.sin(x) * 2.0)
    y = c * 0.5 + 1.0
    return y[-1]


@numba.njit(cache=True)
def cumsum_loop(x):  # type: ignore[no-untyped-def]
    y = np.empty_like(x)
    acc = 0.0
    for i in range(x.shape[0]):
        acc += math.sin(x[i]) * 2.0
        y[i] = acc * 0.5 + 1.0
    return y[-1]


# --- mean and variance in one pass --------------------------------------------------------


def mean_variance(rows: int = 64, cols: int = 32, seed: int = 0) -> float:
    """Per-column mean and variance of a matrix from sum(x) and sum(x*x) (003 eq. 34)."""
    import numpy as np

    x = np.random.default_rng(seed).random((rows, cols))
    m = x.sum(axis=0) / rows
    q = (x * x).sum(axis=0) / rows
    v = q - m * m
    return float(v.sum() + m.sum())


def meanvar_numpy(x):  # type: ignore[no-untyped-def]
    rows = x.shape[0]
    m = x.sum(axis=0) / rows
    q = (x * x).sum(axis=0) / rows
    v = q - m * m
    return v.sum() + m.sum()


@numba.njit(parallel=True, fastmath={"reassoc"}, cache=True)
def meanvar_loop(x):  # type: ignore[no-untyped-def]
    rows, cols = x.shape
    parts = min(rows, 64)
    s1 = np.zeros((parts, cols))
    s2 = np.zeros((parts, cols))
    for p in prange(parts):
        for i in range(p * rows // parts, (p + 1) * rows // parts):
            for j in range(cols):
                a = x[i, j]
                s1[p, j] += a
                s2[p, j] += a * a
    total = 0.0
    for j in range(cols):
        a, b = 0.0, 0.0
        for p in range(parts):
            a += s1[p, j]
            b += s2[p, j]
        m = a / rows
        total += b / rows - m * m + m
    return total


# --- row and column sums -------------------------------------------------------------------


def row_col_sums(rows: int = 64, cols: int = 32, seed: int = 0) -> float:
    """Row sums and column sums of one matrix (003 eq. 34: two reductions, one input)."""
    import numpy as np

    x = np.random.default_rng(seed).random((rows, cols))
    r = x.sum(axis=1)
    c = x.sum(axis=0)
    return float(r.max() + c.max())


def rowcol_numpy(x):  # type: ignore[no-untyped-def]
    r = x.sum(axis=1)
    c = x.sum(axis=0)
    return r.max() + c.max()


@numba.njit(parallel=True, fastmath={"reassoc"}, cache=True)
def rowcol_loop(x):  # type: ignore[no-untyped-def]
    rows, cols = x.shape
    parts = min(rows, 64)
    r = np.empty(rows)
    c = np.zeros((parts, cols))
    for p in prange(parts):
        for i in range(p * rows // parts, (p + 1) * rows // parts):
            acc = 0.0
            for j in range(cols):
                a = x[i, j]
                acc += a
                c[p, j] += a
            r[i] = acc
    best = -np.inf
    for j in range(cols):
        s = 0.0
        for p in range(parts):
            s += c[p, j]
        best = max(best, s)
    return r.max() + best


# --- Normalize2 (002's filter example) ------------------------------------------------------


def normalize2_row(n: int = 1000, seed: int = 0) -> float:
    """Normalize2 of Robinson, Keller and Lippmeier (002): a sum, a filter and the sum of its
    output (filter-fold), and two maps dividing by the sums."""
    import numpy as np

    xs = np.random.default_rng(seed).normal(0.5, 1.0, n)
    sum1 = np.sum(xs)
    gts = xs[xs > 0]
    sum2 = np.sum(gts)
    del gts   # only folded (as in 002's program): the filter's output need not exist
    nor1 = xs / sum1
    nor2 = xs / sum2
    return float(nor1[-1] + nor2[-1])


def normalize2_numpy(xs):  # type: ignore[no-untyped-def]
    sum1 = np.sum(xs)
    gts = xs[xs > 0]
    sum2 = np.sum(gts)
    nor1 = xs / sum1
    nor2 = xs / sum2
    return nor1[-1] + nor2[-1]


@numba.njit(parallel=True, fastmath={"reassoc"}, cache=True)
def normalize2_loop(xs):  # type: ignore[no-untyped-def]
    n = xs.shape[0]
    sum1 = 0.0
    sum2 = 0.0
    for i in prange(n):   # both folds, the filter as a masked add: one pass, nothing written
        a = xs[i]
        sum1 += a
        if a > 0:
            sum2 += a
    nor1 = np.empty(n)
    nor2 = np.empty(n)
    for i in prange(n):
        nor1[i] = xs[i] / sum1
        nor2[i] = xs[i] / sum2
    return nor1[-1] + nor2[-1]


# --- softmax by rows ---------------------------------------------------------------------------


def softmax_rows(rows: int = 64, cols: int = 32, seed: int = 0) -> float:
    """Row-wise softmax: each row's maximum and sum of exponentials (reductions over axis 1
    read by maps of the same rows)."""
    import numpy as np

    x = np.random.default_rng(seed).normal(0.0, 1.0, (rows, cols))
    e = np.exp(x - x.max(axis=1, keepdims=True))
    p = e / e.sum(axis=1, keepdims=True)
    return float(p[-1, -1] + p[0, 0])


def softmax_numpy(x):  # type: ignore[no-untyped-def]
    e = np.exp(x - x.max(axis=1, keepdims=True))
    p = e / e.sum(axis=1, keepdims=True)
    return p[-1, -1] + p[0, 0]


@numba.njit(parallel=True, fastmath={"reassoc"}, cache=True)
def softmax_loop(x):  # type: ignore[no-untyped-def]
    rows, cols = x.shape
    p = np.empty_like(x)
    for i in prange(rows):   # per row: the maximum, the exponentials and their sum, the division
        m = -np.inf
        for j in range(cols):
            m = max(m, x[i, j])
        s = 0.0
        for j in range(cols):
            e = math.exp(x[i, j] - m)
            p[i, j] = e
            s += e
        for j in range(cols):
            p[i, j] = p[i, j] / s
    return p[-1, -1] + p[0, 0]


def _matrix(kw: dict[str, Any]) -> tuple[Any, ...]:
    return (np.random.default_rng(kw["seed"]).random((kw["rows"], kw["cols"])),)


def _vector(kw: dict[str, Any]) -> tuple[Any, ...]:
    return (np.random.default_rng(kw["seed"]).random(kw["n"]),)


def _normal_vector(kw: dict[str, Any]) -> tuple[Any, ...]:
    return (np.random.default_rng(kw["seed"]).normal(0.5, 1.0, kw["n"]),)


def _normal_matrix(kw: dict[str, Any]) -> tuple[Any, ...]:
    return (np.random.default_rng(kw["seed"]).normal(0.0, 1.0, (kw["rows"], kw["cols"])),)


def _presets(tiny: dict[str, Any], medium: dict[str, Any], large: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {"tiny": tiny, "medium": medium, "large": large, "paper": large}


#: the rows' programs, by name (``bench_backend.py --rows combinators``)
COMBINATOR_WORKLOADS: dict[str, Workload] = {
    "cumsum_map": Workload("cumsum_map", "Cumsum of a map, then a map", _SOURCE, cumsum_map,
                           _presets({"n": 10_000, "seed": 0}, {"n": 2_000_000, "seed": 0},
                                    {"n": 20_000_000, "seed": 0}),
                           "np.cumsum(np.sin(x) * 2) * 0.5 + 1: a map, a scan and a map in one kernel."),
    "mean_variance": Workload("mean_variance", "Mean and variance (one pass)", _SOURCE, mean_variance,
                              _presets({"rows": 200, "cols": 100, "seed": 0}, {"rows": 1000, "cols": 2000, "seed": 0},
                                       {"rows": 4000, "cols": 4000, "seed": 0}),
                              "Per-column sum(x) and sum(x*x) of a matrix, fused as sibling reductions."),
    "row_col_sums": Workload("row_col_sums", "Row and column sums", _SOURCE, row_col_sums,
                             _presets({"rows": 200, "cols": 100, "seed": 0}, {"rows": 1000, "cols": 2000, "seed": 0},
                                      {"rows": 4000, "cols": 4000, "seed": 0}),
                             "x.sum(axis=1) and x.sum(axis=0): every axis reduced, one pass over x."),
    "normalize2": Workload("normalize2", "Normalize2 (filter and folds)", "Robinson, Keller, Lippmeier (002)",
                           normalize2_row, _presets({"n": 10_000, "seed": 0}, {"n": 2_000_000, "seed": 0},
                                                    {"n": 20_000_000, "seed": 0}),
                           "sum(xs), sum(xs[xs > 0]), xs / sum1, xs / sum2: a filter-fold beside a fold, two maps."),
    "softmax_rows": Workload("softmax_rows", "Softmax by rows", _SOURCE, softmax_rows,
                             _presets({"rows": 200, "cols": 100, "seed": 0}, {"rows": 1000, "cols": 2000, "seed": 0},
                                      {"rows": 4000, "cols": 4000, "seed": 0}),
                             "exp(x - max(x, axis=1)) / sum(..., axis=1), keepdims: row reductions read by maps."),
}

COMBINATOR_REFS: dict[str, Refs] = {
    "cumsum_map": Refs(cumsum_numpy, None, cumsum_loop, _vector),
    "mean_variance": Refs(meanvar_numpy, None, meanvar_loop, _matrix),
    "row_col_sums": Refs(rowcol_numpy, None, rowcol_loop, _matrix),
    "normalize2": Refs(normalize2_numpy, None, normalize2_loop, _normal_vector),
    "softmax_rows": Refs(softmax_numpy, None, softmax_loop, _normal_matrix),
}


def _check() -> None:
    """Every variant's scalar against NumPy's and the workload's own, at the tiny size."""
    for name, refs in COMBINATOR_REFS.items():
        kw = COMBINATOR_WORKLOADS[name].kwargs("tiny")
        args = refs.args(kw)
        want = float(refs.numpy(*args))
        assert math.isclose(want, COMBINATOR_WORKLOADS[name].run("tiny"), rel_tol=1e-12), name
        for variant in ("numba", "loop"):
            try:
                got = float(getattr(refs, variant)(*args))
            except (numba.core.errors.NumbaError, NotImplementedError) as exc:  # the row's Numba cell says why
                print(f"{name}: Numba refuses the NumPy code: {numba_refusal(exc)}")
                continue
            assert math.isclose(got, want, rel_tol=1e-9), (name, variant, got, want)
        print(f"{name}: numpy, numba (where it compiles) and loop agree ({want:.6g})")


if __name__ == "__main__":
    _check()
