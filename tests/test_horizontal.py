"""Horizontal fusion (issue 14, 003 eq. 31-34): reductions of one input with different axes
or operators run as one pass over the input when they share a block."""

from __future__ import annotations

import numpy as np
import pytest

from fusionlab import parse
from fusionlab.ir.bytecode import Opcode
from fusionlab.capture import capture
from fusionlab.backend.numba.codegen import get_kernel
from fusionlab.backend.numba.layout import split_ranges
from fusionlab.costs import get_cost_model
from fusionlab.backend.numba.plan import plan, run_plan
from fusionlab.runtime.reference import Externals, Storage
from fusionlab.partition import partition

from agreement import CACHE, check_agreement

ROW_COL = parse("""
ARRAY X float64[300, 200]
ARRAY R float64[300]
ARRAY C float64[200]
ARRAY s float64[]
ARRAY m float64[]
ADD_REDUCE R, X, axis=1
ADD_REDUCE C, X, axis=0
ADD_REDUCE s, X
MAXIMUM_REDUCE m, X
SYNC R
SYNC C
SYNC s
SYNC m
""")


def test_row_column_full_sums_and_max_are_one_pass_over_the_input():
    k = get_kernel(ROW_COL, range(len(ROW_COL)))
    # one loop nest reads X (once per element), ranges of axis 0 in parallel
    assert k.source.count("X[i0, i1]") == 4 and k.source.count("for i1 in") == 1
    assert "for sp in numba.prange(nsp)" in k.source and k.parallel_iterations == split_ranges(300, 300 * 200) == 9
    x = np.random.default_rng(0).random((300, 200))
    out = run_plan(plan(ROW_COL, [list(range(len(ROW_COL)))], min_size=0), Storage({"X": x}), Externals(), CACHE)
    # reassociated sums of at most 300 terms of [0, 1): within 2 * 300 * u * 300
    np.testing.assert_allclose(out["R"], x.sum(1), rtol=0, atol=1e-11)
    np.testing.assert_allclose(out["C"], x.sum(0), rtol=0, atol=1e-11)
    np.testing.assert_allclose(out["s"], x.sum(), rtol=1e-12)
    assert out["m"] == x.max()
    # the partitioners merge them: every algorithm's partition compiles and agrees
    check_agreement([ROW_COL], ["greedy", "optimal", "ilp", "linear", "unintrusive"], {"X": x}, atol=1e-11)
    assert partition(ROW_COL, "optimal").blocks[0][:4] == (0, 1, 2, 3)


def test_the_bohrium_saving_of_sibling_reductions_is_the_input_read_once():
    model = get_cost_model("bohrium")
    apart = model.cost(ROW_COL, [[0], [1], [2], [3], [4], [5], [6], [7]])
    merged = model.cost(ROW_COL, [[0, 1, 2, 3], [4], [5], [6], [7]])
    assert apart - merged == 3 * 300 * 200 * 8   # four reads of X become one


AXES = [
    ((20, 30, 40), (0, 1)), ((20, 30, 40), (0, 2)), ((20, 30, 40), (0, 1, 2)), ((20, 30, 40), (0, None)),
    ((3, 5000), (0, 1)), ((7000, 3), (0, None)), ((1, 9), (0, 1)),
]
OPS = [(Opcode.ADD_REDUCE, "float64", np.add), (Opcode.MAXIMUM_REDUCE, "int32", np.maximum),
       (Opcode.MINIMUM_REDUCE, "float32", np.minimum), (Opcode.LOGICAL_OR_REDUCE, "bool", np.logical_or),
       (Opcode.MULTIPLY_REDUCE, "int64", np.multiply)]


@pytest.mark.parametrize("shape,axes", AXES, ids=[f"{s}-{a}" for s, a in AXES])
@pytest.mark.parametrize("op,dtype,ufunc", OPS, ids=[f"{o.name}-{d}" for o, d, _ in OPS])
def test_sibling_reductions_of_a_map_equal_numpy(op, dtype, ufunc, shape, axes):
    dims = lambda s: ", ".join(map(str, s))  # noqa: E731
    decl = [f"ARRAY X {dtype}[{dims(shape)}]", f"ARRAY T {dtype}[{dims(shape)}]"]
    body = ["LOGICAL_NOT T, X" if dtype == "bool" else "NEGATIVE T, X"]
    for k, axis in enumerate(axes):
        out = () if axis is None else tuple(n for a, n in enumerate(shape) if a != axis)
        decl.append(f"ARRAY O{k} {dtype}[{dims(out)}]")
        body.append(f"{op.name} O{k}, T" + ("" if axis is None else f", axis={axis}"))
    body += ["DEL T"] + [f"SYNC O{k}" for k in range(len(axes))]
    p = parse("\n".join(decl + body))
    rng = np.random.default_rng(len(shape) + len(axes))
    x = rng.random(shape) < 0.01 if dtype == "bool" else \
        rng.integers(-3, 4, shape).astype(dtype) if dtype.startswith("int") else rng.random(shape).astype(dtype)
    block = list(range(len(p)))
    k = get_kernel(p, block)
    assert k.contracted == ("T",)
    storage = Storage({"X": x})
    out = run_plan(plan(p, [block], min_size=0), storage, Externals(), CACHE)
    assert "T" not in storage.allocated
    t = np.logical_not(x) if dtype == "bool" else -x
    for j, axis in enumerate(axes):
        with np.errstate(over="ignore"):
            want = ufunc.reduce(t, axis=axis).astype(dtype)
        if op is Opcode.ADD_REDUCE:
            # reassociated sums of at most N terms of [0, 1): within 2 N u N
            n = t.size if axis is None else shape[axis]
            np.testing.assert_allclose(out[f"O{j}"], want, rtol=0, atol=2 * n * n * 1.2e-16)
        else:
            np.testing.assert_array_equal(out[f"O{j}"], want)


def test_captured_mean_and_variance_and_row_column_sums_fuse_and_agree():
    cap = capture("import numpy as np\nx = np.random.default_rng(3).random((400, 300))\n"
                  "m = x.mean(axis=0)\nq = (x * x).mean(axis=0)\nv = q - m * m\n"
                  "r = x.sum(axis=1)\nc = x.sum(axis=0)\nt = x.sum()\n")
    program = cap.batches[-1]
    blocks = partition(program, "greedy").blocks
    reductions = [b for b in blocks if any(program[i].opcode is Opcode.ADD_REDUCE for i in b)]
    # every reduction of x (and the square feeding one) in one block
    assert len(reductions) == 1
    check_agreement(cap.batches, ["greedy", "optimal", "singleton"], cap.inputs, cap.externals, atol=1e-10)


@pytest.mark.parametrize("rows,split", [(300, True), (100, False)])
def test_axis0_reductions_of_many_rows_walk_rows_not_columns(rows, split):
    p = parse(f"ARRAY X float64[{rows}, 50]\nARRAY T float64[{rows}, 50]\nARRAY m float64[50]\nARRAY q float64[50]\n"
              "ADD_REDUCE m, X, axis=0\nMULTIPLY T, X, X\nADD_REDUCE q, T, axis=0\nDEL T\nSYNC m\nSYNC q")
    k = get_kernel(p, range(len(p)))
    # enough rows for 64 ranges of at least 4: partial results per range, rows in memory order
    assert ("for sp in numba.prange(nsp)" in k.source) is split
    assert ("for i1 in numba.prange(n1)" in k.source) is not split
    x = np.random.default_rng(rows).random((rows, 50))
    out = run_plan(plan(p, [list(range(len(p)))], min_size=0), Storage({"X": x}), Externals(), CACHE)
    np.testing.assert_allclose(out["m"], x.sum(0), rtol=0, atol=2 * rows * rows * 1.2e-16)
    np.testing.assert_allclose(out["q"], (x * x).sum(0), rtol=0, atol=2 * rows * rows * 1.2e-16)


def _loop_body(source: str, header: str) -> tuple[list[str], list[str]]:
    """The lines inside the loop opened by the line containing ``header``, and the lines
    after it (Python indentation)."""
    lines = source.splitlines()
    at = next(k for k, line in enumerate(lines) if header in line)
    depth = len(lines[at]) - len(lines[at].lstrip())
    end = next((k for k in range(at + 1, len(lines)) if len(lines[k]) - len(lines[k].lstrip()) <= depth), len(lines))
    return lines[at + 1:end], lines[end:]


INNER = [
    # (shape, reduced axis, the innermost loop's header): row sums beside column sums (split
    # axis 0), a row sum alone (rows in parallel), an axis-0 sum of few rows (columns in
    # parallel: axis 0 innermost), the last axis of three
    ("ARRAY X {t}[300, 200]\nARRAY R {t}[300]\nARRAY C {t}[200]\nADD_REDUCE R, X, axis=1\nADD_REDUCE C, X, axis=0\n"
     "SYNC R\nSYNC C", "R", "for i1 in range(n1)", "R[i0] = acc1"),
    ("ARRAY X {t}[30, 200]\nARRAY R {t}[30]\nARRAY T {t}[30, 200]\nMULTIPLY T, X, X\nADD_REDUCE R, T, axis=1\n"
     "DEL T\nSYNC R", "R", "for i1 in range(n1)", "R[i0] = acc2"),
    ("ARRAY X {t}[30, 200]\nARRAY C {t}[200]\nADD_REDUCE C, X, axis=0\nSYNC C", "C", "for i0 in range(n0)",
     "C[i1] = acc1"),
    ("ARRAY X {t}[6, 7, 300]\nARRAY R {t}[6, 7]\nADD_REDUCE R, X, axis=2\nSYNC R", "R", "for i2 in range(n2)",
     "R[i0, i1] = acc1"),
]


@pytest.mark.parametrize("dtype", ["float64", "int8"])
@pytest.mark.parametrize("text,out,header,store", INNER, ids=["row-col", "row-of-map", "few-rows", "rank3"])
def test_a_reduction_over_the_innermost_axis_accumulates_in_a_scalar_stored_after_its_loop(
        text, out, header, store, dtype):
    p = parse(text.format(t=dtype))
    k = get_kernel(p, range(len(p)))
    inside, after = _loop_body(k.source, header)
    # no load or store of the output in the innermost loop (a store there makes Numba
    # reload every operand and keeps the sum from vectorising): one store, after the loop
    assert not any(f"{out}[" in line for line in inside), k.source
    # (up to the next loop: a split kernel's row lanes have their remaining rows' loop after)
    after = after[:next((k for k, line in enumerate(after) if line.strip().startswith("for ")), len(after))]
    assert sum(line.strip().startswith(store) for line in after) == 1, k.source
    rng = np.random.default_rng(1)
    x = rng.integers(-128, 128, p.base("X").shape).astype(dtype) if dtype == "int8" \
        else rng.random(p.base("X").shape)
    got = run_plan(plan(p, [list(range(len(p)))], min_size=0), Storage({"X": x}), Externals(), CACHE)
    t = x * x if "MULTIPLY" in text else x
    axis = {"R": -1, "C": 0}[out]
    # int8 sums into an int8 output wrap at every step as NumPy's loop does (exact)
    want = np.add.reduce(t, axis=axis, dtype=dtype)
    if dtype == "int8":
        np.testing.assert_array_equal(got[out], want)
    else:
        np.testing.assert_allclose(got[out], want, rtol=0, atol=2 * 300 * 300 * 1.2e-16 * 4)
