"""np.argmin / np.argmax as fused reductions (ARGMIN_REDUCE, ARGMAX_REDUCE): the table's
facts, capture, the reference executor and the kernels against NumPy (first occurrence on
ties, the first NaN for floats, every integer width, bools), the kernels' forms (a running
extreme and its index per output element, per chunk or per row, combined in order), fusion
with a producer, and the k-means corpus program."""

from __future__ import annotations

import io
from contextlib import redirect_stdout
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fusionlab import parse
from fusionlab.ir.bytecode import Opcode, OpFamily
from fusionlab.capture import CaptureError, capture
from fusionlab.backend.numba.codegen import Unsupported, get_kernel, get_kernel_layout
from fusionlab.backend.numba.layout import CHUNK
from fusionlab.backend.numba.plan import plan, run_plan
from fusionlab.runtime.reference import Externals, Storage, run_reference
from fusionlab.pipeline.runner import run
from fusionlab.partition import partition
from fusionlab.ir.text import BytecodeError, format_program
from fusionlab.costs.timemodel import instruction_family
from fusionlab.workloads import CORPUS

from agreement import CACHE

OPS = {"ARGMIN_REDUCE": np.argmin, "ARGMAX_REDUCE": np.argmax}
INTEGERS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
DTYPES = ("float64", "float32") + INTEGERS + ("bool",)


def _shape(shape: tuple[int, ...]) -> str:
    return ",".join(map(str, shape))


def _program(dtype: str, shape: tuple[int, ...], axes: list[int | None], ops: tuple[str, ...] = tuple(OPS)) -> Any:
    """X of ``shape`` and one output per (op, axis), each synced."""
    lines = [f"ARRAY X {dtype}[{_shape(shape)}]"]
    body = []
    for k, (op, axis) in enumerate((op, axis) for axis in axes for op in ops):
        out = () if axis is None else tuple(n for a, n in enumerate(shape) if a != axis % len(shape))
        lines.append(f"ARRAY R{k} int64[{_shape(out)}]")
        body += [f"{op} R{k}, X" + ("" if axis is None else f", axis={axis}"), f"SYNC R{k}"]
    return parse("\n".join(lines + body))


def _wants(x: np.ndarray, axes: list[int | None], ops: tuple[str, ...] = tuple(OPS)) -> list[np.ndarray]:
    return [np.asarray(OPS[op](x, axis=axis)) for axis in axes for op in ops]


def _kernel_run(program: Any, x: np.ndarray, blocks: list[list[int]] | None = None) -> dict[str, np.ndarray]:
    """Every block a compiled kernel (min_size=0: parallel), on X = ``x``."""
    blocks = blocks or [list(range(len(program)))]
    p = plan(program, blocks, min_size=0)
    assert all(b.kernel is not None for b in p.blocks), [b.reason for b in p.blocks]
    return run_plan(p, Storage({"X": x.copy()}), Externals(), CACHE)


def _tied(dtype: str, shape: tuple[int, ...], seed: int, nans: int = 0) -> np.ndarray:
    """Few distinct values (many ties), NaNs at ``nans`` random places of a float array."""
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 3, shape)
    if dtype == "bool":
        return (x > 0).astype(bool)
    x = x.astype(dtype)
    if nans and np.dtype(dtype).kind == "f":
        x.reshape(-1)[rng.choice(x.size, nans, replace=False)] = np.nan
    return x


# --------------------------------------------------------------------------- the table


def test_rows_are_reductions_with_int64_indices_and_parse_and_print():
    assert OpFamily.ARG_REDUCTION <= OpFamily.REDUCTION
    p = parse("ARRAY A float32[3, 4]\nARRAY I int64[3]\nARGMIN I, A, axis=1\nARGMAX I, A, axis=-1")
    assert [i.opcode for i in p] == [Opcode.ARGMIN_REDUCE, Opcode.ARGMAX_REDUCE]
    assert [i.family for i in p] == ["reduction", "reduction"]
    assert "ARGMIN_REDUCE I, A, axis=1" in format_program(p)
    with pytest.raises(BytecodeError, match="int64, not float32"):
        parse("ARRAY A float32[3, 4]\nARRAY I float32[3]\nARGMIN I, A, axis=1")
    with pytest.raises(BytecodeError, match="output shape"):
        parse("ARRAY A float32[3, 4]\nARRAY I int64[4]\nARGMIN I, A, axis=1")
    assert instruction_family(p[0]) == ("reduction", "comparison")


def test_better_tests_keep_the_first_and_the_first_nan():
    """The table's element step folded over samples by plain Python equals NumPy."""
    rng = np.random.default_rng(3)
    for op, fn in OPS.items():
        info = Opcode[op].info
        for dtype in DTYPES:
            for _ in range(20):
                x = _tied(dtype, (7,), int(rng.integers(1 << 30)), nans=int(rng.integers(0, 3)))
                v, k = np.asarray(info.identity_of(dtype)).astype(dtype)[()], 0
                for j, b in enumerate(x):
                    if eval(info.better_of(dtype, "v", "b")):   # noqa: S307 - the table's own source
                        v, k = b, j
                assert k == fn(x), (op, dtype, x, k)


# --------------------------------------------------------------------------- capture


def _captured(src: str) -> Any:
    with redirect_stdout(io.StringIO()):
        return capture("import numpy as np\n" + src)


def test_capture_records_functions_and_methods_with_keepdims():
    src = ("x = np.array([[3.0, 1.0, 1.0], [np.nan, 2.0, np.nan]])\n"
           "a = np.argmin(x, axis=1)\nb = x.argmax(axis=0)\nc = np.argmax(x)\nd = x.argmin(axis=-1, keepdims=True)\n"
           "e = np.argmax(x, keepdims=True)\nf = (x > 1).argmin(axis=1)\n")
    cap = _captured(src)
    ops = [i.opcode.name for b in cap.batches for i in b if i.opcode in OpFamily.REDUCTION | OpFamily.OPAQUE]
    assert ops == ["ARGMIN_REDUCE", "ARGMAX_REDUCE", "ARGMAX_REDUCE", "ARGMIN_REDUCE", "ARGMAX_REDUCE",
                   "ARGMIN_REDUCE"]
    plain: dict[str, Any] = {"np": np}
    exec(src, plain)
    for name in "abcdef":
        got, want = cap.namespace[name], plain[name]
        assert type(got) is type(want) and np.shape(got) == np.shape(want) and np.array_equal(got, want), name
    replayed = cap.replay()
    for name in "abcdef":
        assert np.array_equal(replayed[name], plain[name]), name


@pytest.mark.parametrize("src, error", [
    ("x = np.zeros((0, 3))\ni = x.argmin()", ValueError),
    ("x = np.zeros((2, 3))\ni = np.argmax(x, axis=2)", np.exceptions.AxisError),
    ("x = np.zeros(0)\ni = np.argmax(x)", ValueError),
])
def test_capture_raises_what_numpy_raises(src: str, error: type):
    with pytest.raises(error) as plain:
        exec(src, {"np": np})
    with pytest.raises(CaptureError) as got:   # the user's own error, NumPy's message
        _captured(src)
    assert type(got.value.original) is type(plain.value) and str(got.value.original) == str(plain.value)


def test_out_complex_and_empty_axes_stay_with_numpy():
    src = ("x = np.arange(6.0).reshape(2, 3)\no = np.empty(2, dtype=np.intp)\nnp.argmin(x, axis=1, out=o)\n"
           "z = (x + 1j * x[::-1]).argmax(axis=0)\ne = np.zeros((0, 3)).argmin(axis=1)\n")
    cap = _captured(src)
    names = [i.opcode.name for b in cap.batches for i in b if i.opcode in OpFamily.REDUCTION]
    assert names == []   # out=, complex values and an empty input: NumPy's own calls
    plain: dict[str, Any] = {"np": np}
    exec(src, plain)
    for name in ("o", "z", "e"):
        assert np.array_equal(cap.namespace[name], plain[name]), name


# --------------------------------------------------------------------------- kernels against NumPy


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_dtype_along_rows_with_ties_and_nans(dtype: str):
    """Both ops over axis 1 in one kernel (their INNER form), rows with ties, a NaN or two."""
    x = _tied(dtype, (37, 9), 5, nans=6)
    x[3] = x[3, 0]   # a row of one value: index 0
    if dtype != "bool":
        x[4] = np.iinfo(dtype).max if dtype in INTEGERS else np.inf   # the running extreme's start
        x[5] = np.iinfo(dtype).min if dtype in INTEGERS else -np.inf
    p = _program(dtype, x.shape, [1])
    got = _kernel_run(p, x)
    for k, want in enumerate(_wants(x, [1])):
        assert got[f"R{k}"].dtype == np.int64 and np.array_equal(got[f"R{k}"], want), (dtype, k)
    ref = run_reference(p, storage=Storage({"X": x.copy()}))
    for k, want in enumerate(_wants(x, [1])):
        assert np.array_equal(ref[f"R{k}"], want)


#: the dtypes of the axis and random tests (their kernels are shared: one compile each form)
SWEPT = ["float64", "int8", "bool"]


@pytest.mark.parametrize("dtype", SWEPT)
@pytest.mark.parametrize("shape, axis", [((40, 6), 0), ((40, 6), None), ((5, 6, 7), 0), ((5, 6, 7), 1),
                                         ((5, 6, 7), -1), ((5, 6, 7), None), ((11,), 0)])
def test_axes_and_ranks(dtype: str, shape: tuple[int, ...], axis: int | None):
    x = _tied(dtype, shape, 11, nans=3)
    p = _program(dtype, shape, [axis])
    got = _kernel_run(p, x)
    for k, want in enumerate(_wants(x, [axis])):
        assert np.array_equal(np.asarray(got[f"R{k}"]).reshape(want.shape), want), (k, got[f"R{k}"], want)


def test_the_forms_each_axis_takes():
    """INNER (a scalar pair per row), AXIS (running extremes in an array beside the output),
    PARTIALS (a pair per chunk or row, combined in order), ELEMENT (index 0)."""
    forms = {}
    for shape, axis in [((40, 6), 1), ((5, 6, 7), 1), ((5, 6, 7), None), ((20000,), None), ((), None)]:
        lay = get_kernel_layout(_program("float64", shape, [axis], ("ARGMIN_REDUCE",)), [0])
        forms[(shape, axis)] = (lay.reductions[0].form.value, lay.mode)
    assert forms == {((40, 6), 1): ("inner", "plain"), ((5, 6, 7), 1): ("axis", "plain"),
                     ((5, 6, 7), None): ("partials", "plain"), ((20000,), None): ("partials", "chunked"),
                     ((), None): ("element", "serial")}
    p = parse("ARRAY X float64[]\nARRAY R int64[]\nARGMAX R, X\nSYNC R")
    assert _kernel_run(p, np.array(np.nan))["R"] == 0


def test_chunks_in_parallel_keep_the_first_across_chunk_boundaries():
    """A one-dimensional input of 3 chunks and a bit: the extreme in chunks 1 and 2 (its
    first at chunk 1's last element), a NaN in chunks 2 and 3, an all-equal input."""
    n = 3 * CHUNK + 17
    assert n > 2 * CHUNK and plan(_program("float64", (n,), [None]), [[0, 1, 2, 3]]).blocks[0].kernel is not None
    p = _program("float64", (n,), [None])
    assert get_kernel(p, list(range(len(p)))).parallel_iterations == 4
    x = np.ones(n)
    x[[CHUNK - 1 + CHUNK, 2 * CHUNK, 2 * CHUNK + 5]] = -1.0    # argmin: 2 * CHUNK - 1
    x[[CHUNK, 3 * CHUNK]] = 5.0                                # argmax: CHUNK
    got = _kernel_run(p, x)
    assert (got["R0"], got["R1"]) == (np.argmin(x), np.argmax(x)) == (2 * CHUNK - 1, CHUNK)
    x[[2 * CHUNK + 3, 3 * CHUNK + 1]] = np.nan
    got = _kernel_run(p, x)
    assert (got["R0"], got["R1"]) == (2 * CHUNK + 3, 2 * CHUNK + 3)
    for fill in (np.inf, -np.inf, 0.0):   # every element the running extreme's start, or equal
        got = _kernel_run(p, np.full(n, fill))
        assert (got["R0"], got["R1"]) == (0, 0)
    q = _program("int8", (n,), [None])
    y = np.full(n, 127, dtype=np.int8)
    y[[CHUNK + 2, 3 * CHUNK + 4]] = -128
    got = _kernel_run(q, y)
    assert (got["R0"], got["R1"]) == (np.argmin(y), np.argmax(y)) == (CHUNK + 2, 0)


def test_rows_in_parallel_for_a_full_reduction_of_a_matrix():
    """Axis None of a 2-D input: a pair per row (flat indices), combined in row order."""
    x = np.zeros((300, 50))
    x[7, 49] = x[8, 0] = x[200, 3] = 9.0
    x[100, 1] = x[250, 0] = -3.0
    p = _program("float64", x.shape, [None])
    assert "_pk[i0]" in get_kernel(p, list(range(len(p)))).source
    got = _kernel_run(p, x)
    assert (got["R0"], got["R1"]) == (np.argmin(x), np.argmax(x)) == (100 * 50 + 1, 7 * 50 + 49)


def test_non_contiguous_views_through_capture_and_run():
    src = ("x = np.random.default_rng(4).integers(0, 4, (60, 40)).astype(np.float64)\n"
           "x[5, 7] = np.nan\n"
           "v = x[::2, ::-3]\n"
           "a = v.argmin(axis=1)\nb = np.argmax(v, axis=0)\nc = x.T.argmax(axis=1)\nd = v.argmin()\n")
    cap = _captured(src)
    plain: dict[str, Any] = {"np": np}
    exec(src, plain)
    r = run(cap, "greedy", cache=CACHE, min_size=0, check=True)
    assert r.check is not None and r.check.ok, r.check
    assert not r.fallbacks, r.fallbacks
    for name in "abcd":
        assert np.array_equal(r.values[name], plain[name]), name


def test_fused_with_its_producer_in_one_kernel():
    """Squared distances then their argmin along each row: one kernel, the distances
    contracted (never allocated)."""
    src = ("p = np.random.default_rng(0).random((5000, 8))\nc = np.random.default_rng(1).random(8)\n"
           "lab = ((p - c) ** 2).argmin(axis=1)\n")
    cap = _captured(src)
    (batch,) = [b for b in cap.batches if any(i.opcode is Opcode.ARGMIN_REDUCE for i in b)]
    blocks = partition(batch, "greedy").blocks
    (block,) = [b for b in blocks if any(batch[i].opcode is Opcode.ARGMIN_REDUCE for i in b)]
    ops = [batch[i].opcode.name for i in block if batch[i].opcode not in OpFamily.SYSTEM]
    assert ops[-3:] == ["SUBTRACT", "POWER", "ARGMIN_REDUCE"]   # after the recorded draws it reads
    k = get_kernel(batch, list(block))
    temporaries = {batch[i].outputs[0].base.name for i in block if batch[i].opcode in (Opcode.SUBTRACT, Opcode.POWER)}
    assert temporaries <= set(k.contracted) and k.source.count("numba.prange") == 1
    r = run(cap, "greedy", cache=CACHE, min_size=0, check=True)
    assert r.check is not None and r.check.ok
    plain: dict[str, Any] = {"np": np}
    exec(src, plain)
    assert np.array_equal(r.values["lab"], plain["lab"])


def test_split_ranges_of_axis_0_beside_a_full_reduction():
    """A full sum beside an argmin over axis 0 splits axis 0 in ranges: a running extreme
    and index per range and column, combined in range order (ties across ranges: the first)."""
    n = 1000
    p = parse(f"ARRAY X float64[{n}, 4]\nARRAY S float64[]\nARRAY I int64[4]\nARRAY J int64[4]\n"
              "ADD_REDUCE S, X\nARGMIN I, X, axis=0\nARGMAX J, X, axis=0\nSYNC S\nSYNC I\nSYNC J")
    lay = get_kernel_layout(p, list(range(len(p))))
    assert lay.split and [r.form.value for r in lay.reductions] == ["partials", "split", "split"]
    x = np.zeros((n, 4))
    x[[17, 400, 999], 0] = -1.0          # ranges of 1000 // 64 rows: ties in ranges 1, 25, 63
    x[[500, 501], 1] = np.nan            # the first NaN wins both
    x[[0, 998], 2] = 2.0
    x[:, 3] = np.inf                     # every element the argmin's start
    got = _kernel_run(p, x)
    assert np.array_equal(got["I"], np.argmin(x, axis=0)) and np.array_equal(got["J"], np.argmax(x, axis=0))
    assert got["I"].tolist() == [17, 500, 1, 0] and got["J"].tolist() == [0, 500, 0, 0]


def test_complex_values_and_filters_run_with_numpy_and_say_why():
    z = parse("ARRAY X complex128[8]\nARRAY I int64[]\nARGMIN I, X\nSYNC I")
    with pytest.raises(Unsupported, match="complex"):
        get_kernel(z, [0, 1])
    f = parse("ARRAY X float64[8]\nARRAY M bool[8]\nARRAY C float64[3]\nARRAY I int64[]\nARRAY Y float64[8]\n"
              "COMPRESS C, X, M\nARGMIN I, Y")
    with pytest.raises(Unsupported, match="beside a filter"):
        get_kernel(f, [0, 1])


# --------------------------------------------------------------------------- random programs


@st.composite
def _cases(draw: Any) -> tuple[str, np.ndarray, int | None]:
    dtype = draw(st.sampled_from(SWEPT))
    shape = tuple(draw(st.lists(st.integers(1, 9), min_size=1, max_size=3)))
    axis = draw(st.sampled_from([None] + list(range(-len(shape), len(shape)))))
    seed = draw(st.integers(0, 2 ** 16))
    nans = draw(st.integers(0, 3)) if dtype.startswith("float") else 0
    return dtype, _tied(dtype, shape, seed, nans=min(nans, int(np.prod(shape)))), axis


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_cases())
def test_random_arrays_axes_and_dtypes_agree_with_numpy(case: tuple[str, np.ndarray, int | None]):
    dtype, x, axis = case
    p = _program(dtype, x.shape, [axis])
    got = _kernel_run(p, x)
    ref = run_reference(p, storage=Storage({"X": x.copy()}))
    for k, want in enumerate(_wants(x, [axis])):
        assert np.array_equal(np.asarray(got[f"R{k}"]).reshape(want.shape), want), (k, x, axis)
        assert np.array_equal(np.asarray(ref[f"R{k}"]).reshape(want.shape), want)


# --------------------------------------------------------------------------- the k-means corpus program


def test_kmeans_labels_are_fused_not_opaque_and_run_check_passes():
    with redirect_stdout(io.StringIO()):
        cap = capture(CORPUS["kmeans_step"].script("tiny"), {"__name__": "__main__"})
    names = [i.attr("name") for b in cap.batches for i in b if i.opcode in OpFamily.OPAQUE]
    # before: 15 OPAQUE instructions at this size, 3 of them "ndarray.argmin" (one per Lloyd
    # iteration); now only the boolean selections of 2-D points stay NumPy's
    assert set(names) <= {"fancy indexing"}, names
    args = [i for b in cap.batches for i in b if i.opcode is Opcode.ARGMIN_REDUCE]
    assert len(args) == 3 and all(i.attr("axis") == 1 for i in args)
    # as `fusionlab run --check` runs it (default min_size: the tiny size's blocks run with NumPy)
    r = run(cap, "greedy", cache=CACHE, check=True)
    assert r.check is not None and r.check.ok, r.check
    for batch in cap.batches:   # every block holding an argmin has a kernel
        p = plan(batch, partition(batch, "greedy").blocks, min_size=0)
        for b in p.blocks:
            if any(batch[i].opcode is Opcode.ARGMIN_REDUCE for i in b.instructions):
                assert b.kernel is not None and "ARGMIN_REDUCE" in b.kernel.source, b.reason
