"""What a backend compiles, stated once (issue 33): the Numba backend's facts, a second
backend's capabilities changing what the WSP graph allows without touching a rule, and
the invariant that the blocks a partitioner forms never break a rule the layout asserts."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fusionlab import parse
from fusionlab.analysis.capabilities import DEFAULT, Capabilities, Refusal, refusal
from fusionlab.analysis.legality import Conflict
from fusionlab.analysis.wsp import PartitionState, WSPGraph
from fusionlab.backend.numba.capabilities import NUMBA
from fusionlab.backend.numba.layout import CannotCompile, IllegalBlock, LibraryCall, NothingToCompute, \
    Unsupported, get_kernel_layout
from fusionlab.costs import access_info
from fusionlab.ir.bytecode import Opcode, OpFamily, Program, ProgramError
from fusionlab.ir.text import BytecodeError
from fusionlab.ir.opcodes import OPCODES
from fusionlab.partition import partition

from strategies import programs

# --------------------------------------------------------------------------- Numba's facts


def test_numba_capabilities_are_the_default_graphs():
    assert NUMBA is DEFAULT
    assert WSPGraph(parse("ARRAY X float64[4]\nNEGATIVE X, X")).capabilities is NUMBA
    # every opcode has a kernel form but the opaque call (its row in the opcode table says so)
    assert NUMBA.opcodes == frozenset(Opcode) - OpFamily.OPAQUE
    assert all(OPCODES[op].family != "opaque" for op in NUMBA.opcodes)
    assert NUMBA.complex_opcodes == NUMBA.opcodes - OpFamily.ARG_REDUCTION


def test_numba_computes_with_each_dtype_it_states():
    from numba.np.numpy_support import from_dtype

    for name in NUMBA.dtypes:
        from_dtype(np.dtype(name))   # raises for a dtype Numba has no type of
    assert "float16" not in NUMBA.dtypes and "longdouble" not in NUMBA.dtypes


@pytest.mark.parametrize("text, block, kind", [
    ('ARRAY X float64[4]\nARRAY Y float64[4]\nOPAQUE Y, X, name="sort"', [0], Refusal.OPCODE),
    ("ARRAY X float64[4]\nRANDOM X", [0], Refusal.UNRECORDED_RANDOM),
    ("ARRAY X float16[4]\nNEGATIVE X, X", [0], Refusal.DTYPE),
    ("ARRAY X complex128[8]\nARRAY I int64[]\nARGMIN I, X", [0], Refusal.COMPLEX),
    ("ARRAY X float64[8]\nARRAY M bool[8]\nARRAY C float64[3]\nARRAY I int64[]\nARRAY Y float64[8]\n"
     "COMPRESS C, X, M\nARGMIN I, Y", [0, 1], Refusal.ARG_REDUCTION_FILTER),
    # the graph lets these share a block (the mask is read before the reduction writes it)
    ("ARRAY X float64[4,3]\nARRAY B bool[4,3]\nARRAY M bool[4]\nARRAY Y float64[2,3]\n"
     "COMPRESS Y, X, M\nLOGICAL_OR_REDUCE M, B, axis=1", [0, 1], Refusal.ROW_MASK),
    ("ARRAY X float64[0,3]\nARRAY S float64[3]\nADD_REDUCE S, X, axis=0", [0], Refusal.EMPTY_LOOP),
])
def test_what_numba_cannot_compile_is_refused_with_its_kind(text, block, kind):
    p = parse(text)
    got = refusal(NUMBA, p, block)
    assert got is not None and got.kind is kind
    with pytest.raises(CannotCompile) as info:
        get_kernel_layout(p, block)
    assert info.value.refused == got and str(info.value) == got.detail


def test_planning_outcomes_are_not_refusals():
    with pytest.raises(NothingToCompute):
        get_kernel_layout(parse("ARRAY A float64[8]\nSYNC A"), [0])
    p = parse('ARRAY X float64[4,3]\nARRAY W float64[3,3]\nARRAY Y float64[4,3]\n'
              'CONTRACT Y, X, W, subscripts="ij,jk->ik"')
    with pytest.raises(LibraryCall):
        get_kernel_layout(p, [0])
    assert refusal(NUMBA, p, [0]) is None


def test_the_pipeline_builds_its_graphs_for_numba():
    from fusionlab.pipeline import planning
    from fusionlab.pipeline.caches import PipelineCaches
    from fusionlab.pipeline.config import PipelineConfig

    p = parse("ARRAY X float64[4]\nNEGATIVE X, X\nSYNC X")
    caches = PipelineCaches()
    planning.partition_batch(p, PipelineConfig(), caches)
    assert caches.graphs.get(p).capabilities is NUMBA


# --------------------------------------------------------------------------- a second backend

SCAN_MAP = "ARRAY X float64[4,3]\nARRAY C float64[4,3]\nARRAY D float64[4,3]\nADD_ACCUMULATE C, X, axis=1\nNEGATIVE D, C"
SCAN_REDUCE = "ARRAY X float64[4,3]\nARRAY C float64[4,3]\nARRAY S float64[4]\nADD_ACCUMULATE C, X, axis=1\n" \
    "ADD_REDUCE S, X, axis=1"
SCAN_AXES = "ARRAY X float64[4,3]\nARRAY C float64[4,3]\nARRAY D float64[4,3]\nADD_ACCUMULATE C, X, axis=0\n" \
    "ADD_ACCUMULATE D, X, axis=1"
SCAN_FILTER = "ARRAY X float64[12]\nARRAY M bool[12]\nARRAY C float64[12]\nARRAY F float64[5]\n" \
    "ADD_ACCUMULATE C, X\nCOMPRESS F, X, M"
SCAN_CHAIN = "ARRAY X float64[4,3]\nARRAY C float64[4,3]\nARRAY E float64[4,3]\nARRAY D float64[4,3]\n" \
    "ADD_ACCUMULATE C, X, axis=1\nNEGATIVE E, C\nADD_ACCUMULATE D, E, axis=1"
HISTOGRAM = "ARRAY B int64[12]\nARRAY H int64[8]\nARRAY S int64[]\nBINCOUNT H, B\nADD_REDUCE S, B"
CONTRACT = 'ARRAY X float64[4,3]\nARRAY W float64[3,3]\nARRAY Y float64[4,3]\nARRAY S float64[4]\n' \
    'CONTRACT Y, X, W, subscripts="ij,jk->ik"\nADD_REDUCE S, Y, axis=1'


@pytest.mark.parametrize("text, pair, conflict, change", [
    (SCAN_REDUCE, (0, 1), Conflict.SCAN_REDUCTION, {"scan_with_reduction": True}),
    (SCAN_AXES, (0, 1), Conflict.SCAN_AXES, {"mixed_scan_axes": True}),
    (SCAN_FILTER, (0, 1), Conflict.SCAN_FILTER, {"scan_with_filter": True}),
    (SCAN_CHAIN, (0, 2), Conflict.SCAN_RESULT, {"chained_scans": True}),
    (HISTOGRAM, (0, 1), Conflict.HISTOGRAM_COMPANION,
     {"histogram_companions": NUMBA.histogram_companions | OpFamily.REDUCTION}),
    (CONTRACT, (0, 1), Conflict.CONTRACTION_EPILOGUE,
     {"contraction_epilogue": NUMBA.contraction_epilogue | OpFamily.REDUCTION}),
])
def test_a_rule_that_exists_because_of_the_backend_reads_its_capabilities(text, pair, conflict, change):
    p = parse(text)
    assert WSPGraph(p).forbidden(*pair)[0] is conflict
    other = dataclasses.replace(NUMBA, name="other", **change)
    assert WSPGraph(p, capabilities=other).forbidden(*pair) is None


def test_a_backend_without_scans_runs_them_alone():
    p = parse(SCAN_MAP)
    no_scans = NUMBA.without(OpFamily.SCAN)
    assert WSPGraph(p).forbidden(0, 1) is None
    assert WSPGraph(p, capabilities=no_scans).forbidden(0, 1)[0] is Conflict.OPAQUE
    assert {tuple(b) for b in partition(WSPGraph(p), "greedy", "bohrium").blocks} == {(0, 1)}
    assert {tuple(b) for b in partition(WSPGraph(p, capabilities=no_scans), "greedy", "bohrium").blocks} \
        == {(0,), (1,)}
    assert refusal(no_scans, p, [0]).kind is Refusal.OPCODE and refusal(NUMBA, p, [0]) is None


def test_capabilities_are_frozen_data():
    with pytest.raises(dataclasses.FrozenInstanceError):
        NUMBA.scan_with_reduction = True   # type: ignore[misc]
    assert isinstance(NUMBA, Capabilities) and hash(NUMBA) == hash(DEFAULT)


# --------------------------------------------------------------------------- the invariant

_HEAD = """ARRAY X float64[4,3]
ARRAY Y float64[4,3]
ARRAY Z float64[4,3]
ARRAY K int64[4,3]
ARRAY W float64[3,3]
ARRAY M bool[4,3]
ARRAY N bool[4]
ARRAY F float64[5]
ARRAY Q float64[2,3]
ARRAY R float64[4]
ARRAY C float64[3]
ARRAY S float64[]
ARRAY I int64[]
ARRAY B int64[12]
ARRAY H int64[8]
ARRAY P float16[4,3]
"""
_ARRAYS = ["X", "Y", "Z"]
_LINES = [
    "ADD {o}, {a}, {b}", "NEGATIVE {o}, {a}", "MULTIPLY {o}, {a}, 2", "COPY {o}, {a}",
    "ADD_REDUCE R, {a}, axis=1", "ADD_REDUCE C, {a}, axis=0", "ADD_REDUCE S, {a}", "MAXIMUM_REDUCE R, {a}, axis=1",
    "ADD_ACCUMULATE {o}, {a}, axis=0", "ADD_ACCUMULATE {o}, {a}, axis=1", "MAXIMUM_ACCUMULATE {o}, {a}, axis=1",
    "GREATER M, {a}, 0.5", "COMPRESS F, {a}, M", "ADD_REDUCE S, F", "LOGICAL_OR_REDUCE N, M, axis=1",
    "COMPRESS Q, {a}, N", "ADD_REDUCE C, Q, axis=0", "ARGMIN I, {a}", "GATHER {o}, {a}, K, axis=0",
    'CONTRACT {o}, {a}, W, subscripts="ij,jk->ik"', "RANGE B", "REMAINDER B, B, 8", "BINCOUNT H, B",
    "ADD_REDUCE I, B", "RANDOM {o}, key=1", "NEGATIVE P, P", "SYNC {a}", "SYNC S", "SYNC R",
    'OPAQUE {o}, {a}, name="sort"', "RANDOM {o}",
]


@st.composite
def mixed_programs(draw: st.DrawFn) -> Program:
    """Programs over a few 2-D arrays mixing every family the rules speak of: scans along
    either axis, reductions, element and row filters and their folds, gathers, a contraction,
    histograms, recorded and unrecorded draws, a float16 array, SYNCs and an opaque call."""
    lines: list[str] = []
    for _ in range(draw(st.integers(2, 12))):
        line = draw(st.sampled_from(_LINES)).format(o=draw(st.sampled_from(_ARRAYS)),
                                                    a=draw(st.sampled_from(_ARRAYS)), b=draw(st.sampled_from(_ARRAYS)))
        try:
            parse(_HEAD + "\n".join(lines + [line]))
        except (ProgramError, BytecodeError):   # a line the bytecode rejects (a scan over its input, ...)
            continue
        lines.append(line)
    return parse(_HEAD + "\n".join(lines))


def _assert_no_illegal_block(p: Program) -> None:
    """Each block a partitioner forms has a layout or a refusal the backend states, never a
    rule of the graph broken (the layout's IllegalBlock)."""
    graph = WSPGraph(p, capabilities=NUMBA)
    acc = access_info(p)
    for algorithm in ("greedy", "linear"):
        for block in partition(graph, algorithm, "bohrium").blocks:
            for parallel in (True, False):
                try:
                    get_kernel_layout(p, list(block), parallel, acc)
                except IllegalBlock as exc:   # pragma: no cover - the property's failure
                    raise AssertionError(f"{algorithm} formed {sorted(block)}, which the layout calls illegal: "
                                         f"{exc}") from None
                except CannotCompile as exc:
                    assert exc.refused == refusal(NUMBA, p, sorted(block))
                except Unsupported:   # nothing to compute, a library call: planning outcomes
                    pass


@given(mixed_programs())
def test_blocks_the_partitioners_form_never_break_a_rule_the_layout_asserts(p):
    _assert_no_illegal_block(p)


@given(programs(max_size=10))
def test_the_same_on_the_shared_random_programs(p):
    _assert_no_illegal_block(p)


def test_an_illegal_block_handed_to_the_layout_is_an_illegal_block():
    # the graph forbids it (SCAN_AXES); the layout states the invariant, typed
    p = parse(SCAN_AXES)
    assert PartitionState(WSPGraph(p)).merge_problem(0, 1) is not None
    with pytest.raises(IllegalBlock, match="scans along different axes"):
        get_kernel_layout(p, [0, 1])
