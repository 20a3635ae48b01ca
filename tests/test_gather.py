"""Gathers (GATHER, integer-array indexing): the instruction's rules, capture of ``a[idx]``,
``a[ix, iy]`` and ``np.take``, the reference executor and the kernels against NumPy, the
GATHER_SOURCE rule of the WSP graph, the cost models, and the corpus programs that use them."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fusionlab import parse
from fusionlab.ir.bytecode import Base, Instruction, Literal, Opcode, OpFamily, Program
from fusionlab.capture import CaptureError, capture
from fusionlab.cli import main
from fusionlab.backend.numba.codegen import Unsupported, get_kernel
from fusionlab.costs import check_monotonic, get_cost_model
from fusionlab.backend.numba.plan import plan
from fusionlab.runtime.reference import gather, run_reference
from fusionlab.pipeline.runner import run
from fusionlab.partition import partition
from fusionlab.explore.report import get_graph_data, get_program_data
from fusionlab.ir.text import BytecodeError
from fusionlab.costs.timemodel import TimeModel, default_figures, explain
from fusionlab.workloads import ALL_WORKLOADS
from fusionlab.analysis.wsp import Conflict, WSPGraph

from agreement import check_agreement
from test_numba import CACHE

ALGORITHMS = ["singleton", "linear", "unintrusive", "greedy", "optimal", "ilp"]

#: X written after a gather reads it, and before: two GATHER_SOURCE edges
WRITTEN_SOURCE = """
ARRAY X float64[8]
ARRAY I int64[8]
ARRAY Y float64[8]
RANGE X
RANGE I, start=-1, step=-1
GATHER Y, X, I
ADD X, X, 1
SYNC Y
SYNC X
"""


def _ops(batches):
    return [ins.opcode.name for b in batches for ins in b if ins.opcode not in OpFamily.SYSTEM]


def _capture(src):
    with redirect_stdout(io.StringIO()):
        return capture(src, {})


def _plain(src):
    ns: dict = {}
    with redirect_stdout(io.StringIO()):
        exec(src, ns)
    return ns


# -- the instruction --------------------------------------------------------------------------


def test_gather_instruction_rules():
    head = ("ARRAY X float64[6]\nARRAY M float64[3,4]\nARRAY I int64[5]\nARRAY F float64[5]\nARRAY Y float64[5]\n"
            "ARRAY Z float64[5,4]\nARRAY W int64[5]\nARRAY V float64[3,5]\n")
    p = parse(head + "GATHER Y, X, I\nGATHER Z, M, I[:, None]\nGATHER Y, M, I, I\nGATHER V, M, I, axis=1")
    assert [ins.family for ins in p] == ["gather"] * 4 and [ins.domain for ins in p] == [(5,), (5, 4), (5,), (3, 5)]
    assert parse(p.to_text()) == p
    bad = {
        "GATHER Y, X, F": "index arrays are integers",
        "GATHER Y, X, I, I": "2 index arrays from axis 0 of a 1-d source",
        "GATHER V, M, I, I, axis=1": "2 index arrays from axis 1 of a 2-d source",
        "GATHER V, M, I, axis=-1": "axis=-1 should be the first indexed axis",
        "GATHER Z, M, I[:, None], axis=1": r"should end with the source's untouched extents \(\) and start with its first 1, \(3,\)",
        "GATHER Y, M, I": "should end with the source's untouched extents",
        "GATHER W, X, I": "a gather does not cast",
        "GATHER Y, X": "with arrays only",
        "GATHER Y, X, 1": "with arrays only",
        "GATHER Z, M, I": "does not broadcast",
        "GATHER Y, Y, I": "may not write over its source",
    }
    for line, message in bad.items():
        with pytest.raises(BytecodeError, match=message):
            parse(head + line)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_reference_gather_is_numpy_indexing(data):
    shape = tuple(data.draw(st.lists(st.integers(1, 5), min_size=1, max_size=3)))
    src = np.arange(np.prod(shape), dtype=np.float64).reshape(shape) * 1.5 - 3
    k = data.draw(st.integers(1, len(shape)))
    bshape = tuple(data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=2)))
    keys = [np.array(data.draw(st.lists(st.integers(-n, n - 1), min_size=int(np.prod(bshape)),
                                        max_size=int(np.prod(bshape))))).reshape(bshape) for n in shape[:k]]
    want = src[tuple(keys)]
    # capture's form: each index with unit axes for the source's untouched ones
    idx = [x.reshape(x.shape + (1,) * (len(shape) - k)) for x in keys]
    np.testing.assert_array_equal(gather(src, idx, want.shape), want)


def test_reference_raises_numpy_index_error():
    with pytest.raises(IndexError, match="out of bounds"):
        gather(np.arange(3.0), [np.array([3])], (1,))


# -- capture ------------------------------------------------------------------------------------

CAPTURED = [
    ("x[i]", 1), ("x[-i - 1]", 1), ("np.take(x, i)", 1), ("x[i2d]", 1), ("x[[3, -2, 0, 0]]", 1),
    ("m[i % 4]", 1), ("m[i % 4, :]", 1), ("m[i % 4, ...]", 1), ("np.take(m, i % 4, axis=0)", 1),
    ("np.take(m, i)", 1), ("m[np.arange(5) % 4, j]", 1), ("m[(i % 4)[:, None], j]", 1), ("m[[1, -1]]", 1), ("x.take(i)", 1), ("m.take(i % 4, axis=0)", 1),
    # index arrays after slices or ``...``: GATHER axis=
    ("m[:, j % 5]", 1), ("m[..., [0, -1]]", 1), ("m[1:, [4, -5, 4]]", 1), ("m[::-2, j[:, None] % 5]", 1),
    ("np.take(m, j % 5, axis=1)", 1), ("m.take([0, -1], axis=-1)", 1),
]


@pytest.mark.parametrize("expr, gathers", CAPTURED)
def test_capture_records_a_gather_not_an_opaque_call(expr, gathers):
    src = ("import numpy as np\nx = np.linspace(-1.0, 2.0, 12)\nm = np.arange(20.0).reshape(4, 5) ** 2\n"
           "i = np.array([3, -12, 7, 0, 11])\ni2d = np.array([[1, 1], [-1, 2]])\nj = np.array([4, 0, -5, 2, 1])\n"
           f"y = {expr}\ns = (y * 2 + 1).sum()\n")
    want = _plain(src)
    cap = _capture(src)
    assert not cap.notices, cap.notices
    ops = _ops(cap.batches)
    assert ops.count("GATHER") == gathers and "OPAQUE" not in ops
    np.testing.assert_array_equal(cap.namespace["y"], want["y"])
    r = run(cap, "greedy", check=True, cache=CACHE, min_size=0)
    assert r.check.ok and r.max_abs_error <= 1e-12 and not r.fallbacks, r.fallbacks   # the sum reassociates
    np.testing.assert_array_equal(r.values["y"], want["y"])


@pytest.mark.parametrize("expr", ["m[i % 4, 2]",
                                  "np.take(x, i, mode='wrap')", "x[np.array(3)]"])
def test_other_integer_indexing_stays_opaque_and_right(expr):
    src = ("import numpy as np\nx = np.linspace(-1.0, 2.0, 12)\nm = np.arange(20.0).reshape(4, 5)\n"
           f"i = np.array([3, -12, 7, 0, 11])\nj = np.array([4, 0, -5, 2, 1])\ny = {expr}\n")
    want = _plain(src)
    cap = _capture(src)
    assert "GATHER" not in _ops(cap.batches)
    np.testing.assert_array_equal(cap.namespace["y"], want["y"])


@pytest.mark.parametrize("expr", ["x[np.array([0, 5])]", "x[np.array([-6])]", "np.take(x, np.array([7]))",
                                  "m[np.array([0]), np.array([2])]", "m[[0, 2]]"])
def test_an_index_out_of_range_raises_numpys_index_error_at_capture(expr):
    src = f"import numpy as np\nx = np.arange(5.0)\nm = np.ones((2, 2))\ny = {expr}\n"
    with pytest.raises(IndexError) as plain_error:
        _plain(src)
    with pytest.raises(CaptureError) as got:
        _capture(src)
    assert type(got.value.original) is IndexError and str(got.value.original) == str(plain_error.value)


# -- kernels against NumPy ---------------------------------------------------------------------

DTYPES = ["float64", "float32", "int32", "uint8", "int64", "bool", "complex128"]
INDEX_DTYPES = ["int64", "int32", "uint16", "int8"]


# every source dtype and every index dtype, each compiled kernel set once (a cold cache)
@pytest.mark.parametrize("dtype, index_dtype", [(d, INDEX_DTYPES[k % len(INDEX_DTYPES)])
                                                for k, d in enumerate(DTYPES)])
def test_gathers_of_every_dtype_equal_numpy(dtype, index_dtype):
    src = (
        "import numpy as np\n"
        f"m = (np.arange(60) % 7).reshape(6, 10).astype(np.{dtype})\n"
        f"r = (np.arange(40) * 7 % 6 - (3 if np.dtype(np.{index_dtype}).kind == 'i' else 0)).astype(np.{index_dtype})\n"
        f"c = (np.arange(40) * 3 % 10).astype(np.{index_dtype})\n"
        "a = m[r, c]\n"                       # 2-D source, one index per axis, negative rows
        "b = m[r[:8]]\n"                      # rows: the second axis whole
        "f = m.ravel()[c * 6 % 60]\n"         # 1-D, repeated indices
    )
    want = _plain(src)
    cap = _capture(src)
    assert _ops(cap.batches).count("GATHER") == 3
    r = run(cap, "greedy", check=True, cache=CACHE, min_size=0)
    assert r.check.ok and not r.fallbacks, r.fallbacks
    for name in "abf":
        assert r.values[name].dtype == want[name].dtype
        np.testing.assert_array_equal(r.values[name], want[name])


@settings(max_examples=12, deadline=None)
@given(st.data())
def test_random_gathers_with_broadcast_indices_equal_numpy(data):
    rows, cols = data.draw(st.integers(1, 9)), data.draw(st.integers(1, 9))
    a, b = data.draw(st.integers(1, 6)), data.draw(st.integers(1, 6))
    ri = data.draw(st.lists(st.integers(-rows, rows - 1), min_size=a, max_size=a))
    ci = data.draw(st.lists(st.integers(-cols, cols - 1), min_size=b, max_size=b))
    src = (f"import numpy as np\nm = np.arange({rows * cols}.0).reshape({rows}, {cols}) * 0.5\n"
           f"ri = np.array({ri})\nci = np.array({ci})\n"
           "y = m[ri[:, None], ci] * 2 + 1\nz = m[ri] - 1\nw = np.take(m, ci)\n")
    want = _plain(src)
    cap = _capture(src)
    assert _ops(cap.batches).count("GATHER") == 3 and "OPAQUE" not in _ops(cap.batches)
    r = run(cap, "greedy", check=True, cache=CACHE, min_size=0)
    assert r.check.ok and not r.fallbacks
    for name in "yzw":
        np.testing.assert_array_equal(r.values[name], want[name])


LOOKUP = """
import numpy as np
x = np.linspace(0.0, 1.0, 5000)
cdf = np.cumsum(np.linspace(1.0, 2.0, 256))
cdf /= cdf[-1]
v = cdf[(x * 255).astype(np.int64)]
s = float((v * 2.0 - 1.0).sum())
"""


@pytest.mark.parametrize("driver", ["python", "numba", "blocks"])
def test_index_map_gather_map_and_reduction_are_one_kernel(driver):
    want = _plain(LOOKUP)
    cap = _capture(LOOKUP)
    r = run(cap, "greedy", check=True, cache=CACHE, min_size=0, driver=driver)
    assert r.check.ok and not r.fallbacks   # s (a float) compared with plain NumPy's
    program = next(b for b in cap.batches if any(i.opcode is Opcode.GATHER for i in b))
    p = next(p for p in r.plans if p.program is program)
    (block,) = [b for b in p.blocks if any(program[i].opcode is Opcode.GATHER for i in b.instructions)]
    ops = [program[i].opcode.name for i in block.instructions if program[i].opcode not in OpFamily.SYSTEM]
    # the index's producers, the gather, its consumer map and the sum: one loop
    assert ops == ["RANGE", "MULTIPLY", "COPY", "GATHER", "MULTIPLY", "SUBTRACT", "ADD_REDUCE"]
    # a negative index wraps; one outside the table (a fused rounding) is never read: it raises after the loop
    assert block.kernel is not None and "+= cdf.shape[0]" in block.kernel.source
    assert ">= cdf.shape[0]:" in block.kernel.source and "raise IndexOutOfRange(" in block.kernel.source
    # the index and the mapped values are never allocated
    assert len(block.kernel.contracted) >= 3
    np.testing.assert_array_equal(r.values["v"], want["v"])


def test_a_gather_does_not_share_a_kernel_with_a_writer_of_its_source():
    p = parse(WRITTEN_SOURCE)
    g = WSPGraph(p)
    for pair in [(0, 2), (2, 3)]:   # RANGE X before the gather, ADD X after it
        reason, detail = g.forbidden(*pair)
        assert reason is Conflict.GATHER_SOURCE and "X is gathered from and written" in detail
    assert g.forbidden(1, 2) is None   # the index's producer fuses
    assert any(r is Conflict.GATHER_SOURCE for _, _, r, _ in g.drawn_conflicts())
    with pytest.raises(Unsupported, match="gathered from and written"):
        get_kernel(p, [0, 1, 2])
    want = run_reference(p)
    np.testing.assert_array_equal(want["Y"], np.arange(8.0)[::-1])
    check_agreement([p], ALGORITHMS)
    for algo in ALGORITHMS:
        blocks = partition(p, algo).blocks
        assert not any({0, 2} <= set(b) or {2, 3} <= set(b) for b in blocks), algo


def test_the_explorer_shows_the_gather_family_and_the_reason():
    p = parse(WRITTEN_SOURCE)
    assert [ins["family"] for ins in get_program_data(p)["instructions"]][2] == "gather"
    forbidden = {(e["a"], e["b"]): e for e in get_graph_data(WSPGraph(p))["forbidden"]}
    assert forbidden[(1, 3)]["reason"] == forbidden[(3, 4)]["reason"] == "gather_source"
    assert "data-dependent positions" in forbidden[(3, 4)]["explanation"]


def test_a_gather_from_a_disjoint_part_of_a_written_base_fuses():
    p = parse("""
ARRAY X float64[16]
ARRAY I int64[8]
ARRAY Y float64[8]
RANGE I, start=7, step=-1
GATHER Y, X[:8], I
MULTIPLY X[8:], Y, 2
SYNC X
""")
    g = WSPGraph(p)
    assert g.forbidden(1, 2) is None and g.forbidden(0, 1) is None
    check_agreement([p], ALGORITHMS, inputs={"X": np.arange(16.0)})


@pytest.mark.parametrize("src", [
    LOOKUP,
    "import numpy as np\nz = np.arange(24.0).reshape(6, 4)\nlab = np.array([3, 0, 1, 1, 2, 0])\n"
    "l = np.log(z + 1)\nloss = float((l.max(axis=1) - l[np.arange(6), lab]).mean())\n",
    "import numpy as np\na = np.arange(20.0).reshape(5, 4)\nfor k in range(3):\n    r = a[[k, 4 - k]] * 0.5\n"
    "    a[1:3] = a[1:3] + r\n",
    "import numpy as np\nx = np.linspace(0, 1, 64)\ni = (x * 63).astype(np.int64)[::-1]\n"
    "y = np.exp(x)[i] + np.take(x, i)\nt = y.sum()\n",
    # the source read at the loop index too, and a reversed view as a source
    "import numpy as np\nx = np.linspace(0, 1, 64)\ny = x * 2 + x[(np.arange(64) * 5) % 64] + x[::-1][np.arange(64) % 7]\n",
])
def test_every_block_of_gather_programs_compiles_to_one_kernel(src):
    cap = _capture(src)
    assert "GATHER" in _ops(cap.batches)
    check_agreement(cap.batches, ALGORITHMS, cap.inputs, cap.externals)


# -- cost models ---------------------------------------------------------------------------------


def test_cost_models_count_the_source_whole_and_stay_monotone():
    p = parse("""
ARRAY T float64[1000]
ARRAY I int64[10]
ARRAY J int64[10]
ARRAY Y float64[10]
ARRAY S float64[]
ADD J, I, 1
GATHER Y, T, J
ADD_REDUCE S, Y
DEL J
DEL Y
SYNC S
""")
    # T read whole (8000 bytes), I read (80), S written (8); J and Y contracted
    assert get_cost_model("bohrium").cost(p, [list(range(len(p)))]) == 8000 + 80 + 8
    b = explain(p, [list(range(len(p)))], TimeModel(default_figures()))[0]
    assert b.read_bytes == 8000 + 80 and b.write_bytes == 8
    for name in ["bohrium", "max_contract", "max_locality", "robinson", "time"]:
        assert check_monotonic(get_cost_model(name), p) is None, name


# -- the corpus ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["histogram_equalize", "softmax_logsumexp"])
def test_corpus_lookups_are_gathers_that_run_fused(name):
    cap = _capture(ALL_WORKLOADS[name].script("tiny"))
    ops = _ops(cap.batches)
    assert "GATHER" in ops
    assert not any(i.attr("name") == "fancy indexing" for b in cap.batches for i in b)
    r = run(cap, "greedy", check=True, cache=CACHE, min_size=0)
    assert r.check.ok
    assert not any("OPAQUE" in f and "GATHER" in f for f in r.fallbacks)
    for p in r.plans:
        for b in p.blocks:
            if any(p.program[i].opcode is Opcode.GATHER for i in b.instructions):
                assert b.kernel is not None, b.reason


def test_verify_passes_on_the_histogram_corpus_program(capsys):
    code = main(["verify", "histogram_equalize", "--algorithm", "greedy", "--format", "json"])
    d = json.loads(capsys.readouterr().out)
    assert code == 0 and d["mismatches"] == [] and d["replayed"] >= 2


# -- random programs: gathers among maps that read and write their sources -----------------------

_FLOATS = [Base(n, "float64", (8,)) for n in "XYZ"]
_INDICES = [Base(n, "int64", (8,)) for n in "IJ"]
_SUM = Base("s", "float64", ())


@st.composite
def _gather_programs(draw):
    """Maps over X, Y, Z (whole or reversed views), index ranges in [-8, 8), gathers between
    the float arrays and sums: sources written before and after their gathers."""
    body = []
    for _ in range(draw(st.integers(2, 7))):
        kind = draw(st.integers(0, 4))
        out = draw(st.sampled_from(_FLOATS))
        if kind == 0:
            start, step = draw(st.sampled_from([(-8, 1), (-3, 1), (7, -1), (3, -1)]))
            body.append(Instruction(Opcode.RANGE, (draw(st.sampled_from(_INDICES)).view(),), (),
                                    {"start": start, "step": step}))
        elif kind in (1, 2):
            src = draw(st.sampled_from([b for b in _FLOATS if b != out]))
            idx = draw(st.sampled_from(_INDICES))
            body.append(Instruction(Opcode.GATHER, (out.view(),), (src.view(), idx.view())))
        elif kind == 3:
            a = draw(st.sampled_from(_FLOATS))
            view = a.view() if draw(st.booleans()) or a == out else a[::-1]
            body.append(Instruction(draw(st.sampled_from([Opcode.ADD, Opcode.MULTIPLY])), (out.view(),),
                                    (view, Literal(draw(st.sampled_from([0.5, 2.0]))))))
        else:
            body.append(Instruction(Opcode.ADD_REDUCE, (_SUM.view(),), (draw(st.sampled_from(_FLOATS)).view(),),
                                    {"axis": None}))
    body += [Instruction(Opcode.SYNC, (), (b.view(),)) for b in _FLOATS + [_SUM]]
    return Program(tuple(_FLOATS + _INDICES + [_SUM]), tuple(body))


_INPUTS = {"X": np.linspace(-1, 1, 8), "Y": np.arange(8.0), "Z": np.ones(8), "I": np.arange(8)[::-1].copy(),
           "J": np.array([-1, 0, -8, 7, 3, 3, -2, 1])}


def _gather_source_oracle(p):
    """Pairs (u < v) where one is a GATHER and the other writes a view overlapping its source."""
    out = set()
    for g, ins in enumerate(p):
        if ins.opcode is not Opcode.GATHER:
            continue
        for w, other in enumerate(p):
            if w != g and other.opcode not in OpFamily.SYSTEM and any(
                    v.overlaps(ins.views_in[0]) for v in other.writes()):
                out.add((min(g, w), max(g, w)))
    return out


@settings(max_examples=40, deadline=None)
@given(_gather_programs())
def test_random_gather_programs_forbid_exactly_the_writers_of_sources(p):
    g = WSPGraph(p)
    got = {(u, v) for u, v, r, _ in g.drawn_conflicts() if r is Conflict.GATHER_SOURCE}
    oracle = _gather_source_oracle(p)
    assert got <= oracle
    # every oracle pair is forbidden (by this rule, or by one found first on the same base)
    assert [pair for pair in sorted(oracle) if g.forbidden(*pair) is None] == []
    for algo in ["greedy", "optimal", "linear"]:
        for block in partition(p, algo).blocks:
            if any(p[i].opcode not in OpFamily.SYSTEM for i in block):
                get_kernel(p, block)   # compiles: never a gather beside a writer of its source
    for name in ["bohrium", "max_contract", "max_locality", "robinson", "time"]:
        assert check_monotonic(get_cost_model(name), p, trials=40, exhaustive_limit=5) is None, name


@settings(max_examples=6, deadline=None)
@given(_gather_programs())
def test_random_gather_programs_run_fused_as_the_reference(p):
    check_agreement([p], ["greedy"], inputs={k: v.copy() for k, v in _INPUTS.items()})
