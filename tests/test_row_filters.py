"""Row selections ``x[mask]`` with a bool mask over ``x``'s leading axes (k-means'
``points[labels == j]``): captured as COMPRESS (not OPAQUE), the reference executor, the
filter-fold of the rows (``axis=0`` and ``None``) in the filter's loop, the compaction of a
written selection (serial in C order, two passes over ranges of rows in parallel), and
differential tests against NumPy (docs/filters-gathers-histograms.md, "Filters", "Row selections")."""

from __future__ import annotations

import io
import warnings
from contextlib import redirect_stdout

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fusionlab import parse
from fusionlab.ir.bytecode import Opcode, OpFamily
from fusionlab.capture import capture
from fusionlab.backend.numba.codegen import get_kernel
from fusionlab.backend.numba.plan import plan, run_plan
from fusionlab.runtime.reference import Externals, run_reference
from fusionlab.pipeline.runner import run
from fusionlab.analysis.filters import filter_folds, loop_domains, reduction_axis
from fusionlab.partition import partition
from fusionlab.ir.text import BytecodeError
from fusionlab.workloads import CORPUS
from fusionlab.analysis.wsp import Conflict, WSPGraph
from fusionlab.backend.numba.driver import Runs

from test_numba import CACHE, RecordingStorage

ROWS_FOLD = """
ARRAY X float64[6,3]
ARRAY M bool[6]
ARRAY Y float64[{k},3]
ARRAY S float64[3]
ARRAY T float64[]
RANGE X
LESS M, X[:, 0], 9
COMPRESS Y, X, M
ADD_REDUCE S, Y, axis=0
MAXIMUM_REDUCE T, Y
{end}
SYNC S
SYNC T
"""


def _ops(cap) -> list[str]:
    return [ins.opcode.name for b in cap.batches for ins in b if ins.opcode not in OpFamily.SYSTEM]


def _plain(src: str) -> dict:
    ns: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # the mean of no rows: nan, as NumPy warns
        exec(src, ns)
    return ns


def _same(got, want, dtype: str) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape, got.dtype, want.dtype)
    if np.issubdtype(want.dtype, np.floating):   # folds reassociated (fastmath): a relative tolerance
        np.testing.assert_allclose(got, want, rtol=1e-5 if "32" in dtype else 1e-12, atol=0)
    else:
        np.testing.assert_array_equal(got, want)


def _run_fused(src: str, names: list[str], dtype: str = "float64", algos=("greedy", "optimal"),
               empty: bool = False) -> None:
    """Capture ``src``: its row selections are COMPRESS (no OPAQUE); each algorithm's fused
    run (every block a kernel; ``empty``: but those over no element) gives NumPy's values."""
    plain = _plain(src)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        cap = capture(src, {})
    ops = _ops(cap)
    assert "COMPRESS" in ops and "OPAQUE" not in ops, ops
    for algo in algos:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            r = run(cap, algo, check=True, cache=CACHE, min_size=0)
        assert r.check.ok, (algo, r.check)
        # no block fell back to NumPy (but one over an empty selection: nothing to run)
        assert r.ran is Runs.PYTHON_DRIVER or empty and "(an empty iteration space" in r.driver, \
            (algo, r.driver)
        for n in names:
            _same(r.values[n], plain[n], dtype)


# -- bytecode, capture and the reference executor -------------------------------------------


def test_row_compress_instruction_rules():
    ok = parse(ROWS_FOLD.format(k=3, end="DEL Y"))
    assert ok[2].opcode is Opcode.COMPRESS and ok[2].domain == (6, 3)
    bad = {
        "COMPRESS Y, X, N": "selects neither elements nor rows",
        "COMPRESS Z, X, M": r"must be \(count,\) \+ \(3,\) with count at most 6",
        "COMPRESS W, X, M": r"must be \(count,\) \+ \(3,\)",
    }
    for line, message in bad.items():
        with pytest.raises(BytecodeError, match=message):
            parse("ARRAY X float64[6,3]\nARRAY M bool[6]\nARRAY N bool[3]\nARRAY Y float64[2,3]\n"
                  f"ARRAY Z float64[7,3]\nARRAY W float64[2]\n{line}")


@pytest.mark.parametrize("key, shape", [("m", (3, 4)), ("m, :", (3, 4)), ("m, ...", (3, 4)), ("m, 1", (3,)),
                                        ("m, 1:3", (3, 2)), ("m, ::-2", (3, 2))])
def test_row_keys_are_recorded_as_compress(key, shape):
    src = ("import numpy as np\nx = np.arange(24.0).reshape(6, 4)\nm = x[:, 0] % 8 > 3\n"
           f"y = x[{key}]\n")
    cap = capture(src, {})
    assert _ops(cap) == ["RANGE", "REMAINDER", "GREATER", "COMPRESS"]
    assert cap.namespace["y"].shape == shape
    np.testing.assert_array_equal(cap.namespace["y"], _plain(src)["y"])
    (c,) = [ins for ins in cap.program if ins.opcode is Opcode.COMPRESS]
    assert c.outputs[0].shape == shape and c.views_in[1].shape == (6,)


def test_masks_over_two_leading_axes_and_other_keys():
    src = ("import numpy as np\ny = np.arange(60.0).reshape(3, 4, 5)\nmm = y[:, :, 0] > 10\n"
           "a = y[mm]\nb = y[mm, 2]\nc = y[y[:, 0, 0] > 0, :, 1]\nd = y[mm.tolist()]\n"
           "e = y[:, np.array([True, False, True, False])]\n")
    cap = capture(src, {})
    plain = _plain(src)
    for n in "abcde":
        np.testing.assert_array_equal(cap.namespace[n], plain[n])
    ops = _ops(cap)
    assert ops.count("COMPRESS") == 4 and ops.count("OPAQUE") == 1   # a mask over a later axis: NumPy


def test_reference_refuses_a_row_count_it_did_not_record():
    p = parse(ROWS_FOLD.format(k=2, end="DEL Y"))   # X < 9 in column 0 selects rows 0, 1, 2
    with pytest.raises(ValueError, match="selects 3 rows but the output Y holds 2"):
        run_reference(p)
    out = run_reference(parse(ROWS_FOLD.format(k=3, end="DEL Y")))
    assert out["S"].tolist() == [9.0, 12.0, 15.0] and float(out["T"]) == 8.0


# -- the WSP rules and the loop domain -------------------------------------------------------


def test_a_fold_of_the_rows_loops_over_the_data():
    p = parse(ROWS_FOLD.format(k=3, end="DEL Y"))
    assert filter_folds(p) == {3: 2, 4: 2}
    assert loop_domains(p)[3] == (6, 3) and p[3].domain == (3, 3)
    assert reduction_axis(p, 3) == 0 and reduction_axis(p, 4) is None
    g = WSPGraph(p)
    assert g.forbidden(2, 3) is None and g.forbidden(2, 4) is None


def test_a_fold_over_another_axis_is_no_filter_fold():
    p = parse("""
ARRAY X float64[6,3]
ARRAY M bool[6]
ARRAY Y float64[3,3]
ARRAY R float64[3]
RANGE X
LESS M, X[:, 0], 9
COMPRESS Y, X, M
ADD_REDUCE R, Y, axis=1
SYNC R
""")
    assert filter_folds(p) == {}
    reason, _ = WSPGraph(p).forbidden(2, 3)
    assert reason is Conflict.FILTER_OUTPUT


# -- kernels --------------------------------------------------------------------------------


def test_filter_and_folds_are_one_kernel_with_the_rows_contracted():
    p = parse(ROWS_FOLD.format(k=3, end="DEL Y"))
    block = [2, 3, 4, 5]
    k = get_kernel(p, block)
    assert k.contracted == ("Y",) and k.parallel_iterations > 0
    assert "acc3_keep = M[i0]" in k.source   # the row mask: by the leading loop index
    assert "if acc3_keep: " in k.source and "Y[" not in k.source
    storage = RecordingStorage()
    out = run_plan(plan(p, [[0, 1], block, [6], [7]], min_size=0), storage, Externals(), CACHE)
    assert "Y" not in storage.allocated
    assert out["S"].tolist() == [9.0, 12.0, 15.0] and float(out["T"]) == 8.0


def test_written_rows_are_compacted_serially_and_in_two_passes():
    p = parse(ROWS_FOLD.format(k=3, end="SYNC Y"))
    block = [2, 3, 4, 5]
    serial = get_kernel(p, block, parallel=False)
    assert serial.parallel_iterations == 0
    assert "acc3_rows = Y.reshape(Y.size)" in serial.source
    assert "    if acc3_count < acc3_rows.shape[0]: acc3_rows[acc3_count] = acc3_val" in serial.source
    assert "if acc3_count != acc3_rows.shape[0]:" in serial.source
    two = get_kernel(p, block)
    assert two.parallel_iterations == 6   # a range per row (at most 64 ranges)
    assert "acc3_buf[sp * ((n0 + nsp - u1) // nsp) * n1 + acc3_count] = acc3_val" in two.source
    for parallel_from in (0, 1 << 30):
        out = run_plan(plan(p, [[0, 1], block, [6], [7]], min_size=parallel_from), RecordingStorage(),
                       Externals(), CACHE)
        np.testing.assert_array_equal(out["Y"], np.arange(18.0).reshape(6, 3)[:3])
        assert out["S"].tolist() == [9.0, 12.0, 15.0] and float(out["T"]) == 8.0


def test_a_fold_without_its_filter_reads_the_rows_under_a_guard():
    p = parse(ROWS_FOLD.format(k=3, end="DEL Y"))
    blocks = [[0, 1], [2], [3, 4, 5], [6], [7]]
    k = get_kernel(p, blocks[2])
    assert "if i0 < np.uint64(Y.shape[0]): " in k.source and "Y[i0, i1]" in k.source
    out = run_plan(plan(p, blocks, min_size=0), RecordingStorage(), Externals(), CACHE)
    assert out["S"].tolist() == [9.0, 12.0, 15.0] and float(out["T"]) == 8.0


def test_many_ranges_of_rows_compact_in_order():
    n = 5000
    src = (f"import numpy as np\nx = np.sin(np.arange({3 * n}.0)).reshape({n}, 3)\n"
           "y = x[x[:, 1] > 0.2]\nz = y * 2.0\ns = x[x[:, 0] < -0.5].sum(axis=0)\n")
    _run_fused(src, ["y", "z", "s"])


# -- differential tests against NumPy --------------------------------------------------------

_MASKS = {"random": "np.sin(np.arange({n}) * 7.3) > 0.2", "none": "np.arange({n}) < 0",
          "all": "np.arange({n}) >= 0"}
_DATA = "(np.cos(np.arange({size}).reshape({shape}) * 0.37) * 50).astype(np.{dtype})"


@pytest.mark.parametrize("dtype, shape", [("float64", (40, 3)), ("float32", (12, 4, 5)), ("int32", (40, 3)),
                                          ("uint8", (12, 4, 5))])
def test_folds_of_selected_rows_equal_numpy(dtype, shape):
    """Rows selected by a random mask, by none and by all, and their folds over the rows,
    over everything and over another axis."""
    n, size = shape[0], int(np.prod(shape))
    lines = ["import numpy as np", "x = " + _DATA.format(size=size, shape=shape, dtype=dtype)]
    names = []
    for mask, pred in _MASKS.items():
        lines += [f"m_{mask} = " + pred.format(n=n), f"y_{mask} = x[m_{mask}]",
                  f"s0_{mask} = x[m_{mask}].sum(axis=0)", f"sa_{mask} = x[m_{mask}].sum()"]
        names += [f"{v}_{mask}" for v in ("y", "s0", "sa")]
        if mask != "none":   # the min and max of no rows: NumPy raises
            lines += [f"mn_{mask} = x[m_{mask}].min(axis=0)", f"mx_{mask} = x[m_{mask}].max()"]
            names += [f"{v}_{mask}" for v in ("mn", "mx")]
    # the mean (of no rows it warns, captured as NumPy's) and folds over another axis
    lines += ["me = x[m_random].mean(axis=0)", "s1 = y_random.sum(axis=1)", "ml = y_all.max(axis=-1)",
              "s1_none = y_none.sum(axis=-1)"]
    names += ["me", "s1", "ml", "s1_none"]
    # no rows: the blocks over the empty selection (its sum over axis 1) run with NumPy
    _run_fused("\n".join(lines) + "\n", names, dtype, algos=("greedy",), empty=True)


def test_bool_rows_and_their_counts():
    src = ("import numpy as np\nx = np.cos(np.arange(60.0).reshape(20, 3)) > 0\nm = np.sin(np.arange(20.0)) > 0\n"
           "y = x[m]\nc = x[m].sum(axis=0)\nany_ = x[m].max(axis=0)\n")
    _run_fused(src, ["y", "c", "any_"], "bool", algos=("greedy",))


def test_views_of_data_and_mask():
    src = ("import numpy as np\nbig = np.cos(np.arange(400.0)).reshape(40, 10)\nx = big[::2, 7:1:-2]\n"
           "lab = (np.arange(60) * 7) % 4\nm = (lab == 1)[::3]\n"
           "s = x[m].sum(axis=0)\nmn = x[m].min(axis=0)\ny = x[m]\nt = x[lab[10:30] > 0, 1:].max(axis=0)\n"
           "u = big.T[big[0] > 0].sum(axis=0)\n")
    _run_fused(src, ["s", "mn", "y", "t", "u"])


def test_empty_data_runs_as_numpy_does():
    src = "import numpy as np\nx = np.zeros((0, 3))\nm = np.zeros(0, dtype=bool)\ny = x[m]\ns = x[m].sum(axis=0)\n"
    plain = _plain(src)
    cap = capture(src, {})
    assert "COMPRESS" in _ops(cap)
    r = run(cap, "greedy", check=True, cache=CACHE, min_size=0)
    assert r.check.ok
    _same(r.values["s"], plain["s"], "float64")
    assert r.values["y"].shape == (0, 3)


def test_masked_assignment_with_a_row_mask_still_matches_numpy():
    src = ("import numpy as np\nx = np.arange(12.0).reshape(4, 3)\nm = x[:, 0] > 4\n"
           "x[m] = -x[m]\nx[x[:, 1] < 0] = 7.0\ns = x.sum()\n")
    plain = _plain(src)
    cap = capture(src, {})
    # the selection read is a COMPRESS; the assignment of rows stays NumPy's (an indexed assignment)
    assert "COMPRESS" in _ops(cap) and "OPAQUE" in _ops(cap)
    r = run(cap, "greedy", check=True, cache=CACHE, min_size=0)
    assert r.check.ok
    np.testing.assert_array_equal(r.values["x"], plain["x"])


# -- k-means --------------------------------------------------------------------------------


def test_kmeans_selections_fold_in_one_kernel_per_step():
    with redirect_stdout(io.StringIO()):
        cap = capture(CORPUS["kmeans_step"].script("tiny"), {"__name__": "__main__"})
    ops = _ops(cap)
    assert "OPAQUE" not in ops and ops.count("COMPRESS") == 12   # 4 clusters x 3 Lloyd steps
    kernels = 0
    for batch in cap.batches:
        blocks = partition(batch, "greedy").blocks
        p = plan(batch, blocks, min_size=0)
        for b in p.blocks:
            filters = [i for i in b.instructions if batch[i].opcode in OpFamily.FILTER]
            if not filters:
                continue
            kernels += 1
            assert b.kernel is not None, b.reason
            # each selection's fold (the mean's sum) shares its kernel; only the last
            # ``members`` (alive after the loop) is written
            folds = {c for r, c in filter_folds(batch).items() if r in b.instructions}
            assert folds == set(filters)
            written = [c for c in filters if batch[c].outputs[0].base.name not in b.kernel.contracted]
            assert len(written) <= 1
    assert kernels == 3   # the 4 clusters of a step in one kernel, a step a batch
    r = run(cap, "greedy", check=True, cache=CACHE, min_size=0)
    assert r.check.ok and r.ran is Runs.PYTHON_DRIVER, (r.check, r.driver)


# -- random programs --------------------------------------------------------------------------

_KEYS = ["{x}[{m}]", "{x}[{m}, :]", "{x}[{m}, ...]", "{x}[{m}, 1]", "{x}[{m}, 1:]"]
_FOLDS = ["{y}.sum(axis=0)", "{y}.mean(axis=0)", "{y}.max(axis=0)", "{y}.min(axis=0)", "{y}.sum()",
          "np.max({y})", "{y}.sum(axis=-1)", "{y}.prod(axis=0)"]
_USES = ["{y} * 2.0", "{y}[::2].copy()", "np.sqrt(np.abs({y}))"]
_PREDS = ["{a}[:, 0] > 0.5", "{a}[:, -1] < 1.2", "np.abs({a}[:, 1] - 1.0) > 0.3", "{a}[:, 0] == {a}[:, 0]"]


@st.composite
def row_sources(draw: st.DrawFn) -> str:
    """Source text: a map of 2-D or 3-D data, row selections by random predicates of a
    column, folds of the selections (over their rows, everything, or another axis) and
    sometimes other uses of them."""
    shape = draw(st.sampled_from(["(30, 4)", "(10, 3, 4)"]))
    lines = ["import numpy as np", f"x = np.linspace(0.05, 2.0, 120).reshape{shape}",
             "a = " + draw(st.sampled_from(["x * 1.5", "np.sqrt(x)", "x + 0.25"]))]
    for k in range(draw(st.integers(1, 3))):
        pred = draw(st.sampled_from(_PREDS)).format(a=draw(st.sampled_from(["x", "a"]))).replace(
            "[:, 0]", "[:, 0]" if shape == "(30, 4)" else "[:, 0, 0]").replace(
            "[:, -1]", "[:, -1]" if shape == "(30, 4)" else "[:, -1, 1]").replace(
            "[:, 1]", "[:, 1]" if shape == "(30, 4)" else "[:, 1, 2]")
        lines.append(f"m{k} = {pred}")
        key = draw(st.sampled_from(_KEYS)).format(x=draw(st.sampled_from(["x", "a"])), m=f"m{k}")
        lines.append(f"y{k} = {key}")
        fold = draw(st.sampled_from(_FOLDS)).format(y=f"y{k}")
        lines.append(f"f{k} = {fold} if len(y{k}) else 0.0")
        if draw(st.booleans()):
            lines.append(f"u{k} = " + draw(st.sampled_from(_USES)).format(y=f"y{k}"))
    lines.append("z = a / (1.0 + np.sum(x * x))")
    return "\n".join(lines) + "\n"


@settings(max_examples=3, deadline=None)   # each example compiles a few kernels
@given(source=row_sources())
def test_random_row_programs_equal_numpy(source):
    plain = _plain(source)
    cap = capture(source, {})
    assert "COMPRESS" in _ops(cap) and "OPAQUE" not in _ops(cap)
    for algo in ("greedy", "optimal"):
        r = run(cap, algo, check=True, cache=CACHE, min_size=0)
        assert r.check.ok, (algo, r.check)
        assert r.ran is Runs.PYTHON_DRIVER, (algo, r.driver)
        for name, want in plain.items():
            if isinstance(want, (np.ndarray, np.generic)) and name in r.values:
                _same(r.values[name], want, "float64")
