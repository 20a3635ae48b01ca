"""Filters (COMPRESS, issue 14 / 002): capture, the reference executor, the WSP rules, the
kernels (filter-fold, compaction, guarded folds) and Normalize2's partition."""

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
from fusionlab.costs import block_info
from fusionlab.backend.numba.plan import plan, run_plan
from fusionlab.runtime.reference import Externals, run_reference
from fusionlab.pipeline.runner import run
from fusionlab.partition import ALGORITHMS, partition
from fusionlab.workloads import WORKLOADS
from fusionlab.ir.text import BytecodeError
from fusionlab.analysis.wsp import Conflict, WSPGraph, partition_problems
from fusionlab.backend.numba.driver import Runs

from test_numba import CACHE, RecordingStorage

ALGOS = [a for a in ALGORITHMS if a != "exhaustive"]

FILTER_FOLD = """
ARRAY X float64[8]
ARRAY M bool[8]
ARRAY Y float64[5]
ARRAY S float64[]
ARRAY T float64[]
RANGE X, start=-3.0, step=1.0
GREATER M, X, 0
COMPRESS Y, X, M
DEL M
ADD_REDUCE S, Y
MAXIMUM_REDUCE T, X
DEL Y
SYNC S
SYNC T
"""


def _ops(program):
    return [ins.opcode.name for ins in program if ins.opcode not in OpFamily.SYSTEM]


# -- bytecode and capture ------------------------------------------------------------------


def test_compress_instruction_rules():
    ok = parse(FILTER_FOLD)
    assert ok[2].opcode is Opcode.COMPRESS and ok[2].family == "filter" and ok[2].domain == (8,)
    bad = {
        "COMPRESS Y, X, X": "make it bool first",
        "COMPRESS Y, X, N": "selects neither elements nor rows",
        "COMPRESS Z, X, M": "must be 1-D with at most 8",
        "COMPRESS Y, X": "takes 2 input operand",
        "COMPRESS Y, X, 1": "two arrays",
    }
    for line, message in bad.items():
        with pytest.raises(BytecodeError, match=message):
            parse("ARRAY X float64[8]\nARRAY M bool[8]\nARRAY N bool[4]\nARRAY Y float64[5]\n"
                  f"ARRAY Z float64[9]\n{line}")


@pytest.mark.parametrize("expr", ["x[x > 0.25]", "np.extract(x > 0.25, x)", "np.compress((x > 0.25).ravel(), x)",
                                  "x[np.abs(x) < 0.5]", "np.extract(np.floor(x * 3), x)",
                                  "x.reshape(4, 6)[x.reshape(4, 6) > 0]"])
def test_capture_records_a_filter_not_an_opaque_call(expr):
    src = f"import numpy as np\nx = np.linspace(-1.0, 1.5, 24)\ny = {expr}\ns = y.sum()\n"
    plain: dict = {}
    exec(src, plain)
    cap = capture(src, {})
    assert not cap.notices, cap.notices
    ops = [o for b in cap.batches for o in _ops(b)]
    assert "COMPRESS" in ops and "OPAQUE" not in ops
    np.testing.assert_array_equal(cap.namespace["y"], plain["y"])
    r = run(cap, "optimal", check=True, cache=CACHE, min_size=0)
    assert r.check.ok and r.max_abs_error <= 1e-12


def test_other_fancy_indexing_stays_opaque():
    # a mask over a later axis (a row mask over the first is a COMPRESS: test_row_filters.py)
    cap = capture("import numpy as np\nx = np.arange(6.0).reshape(2, 3)\ny = x[:, np.array([True, False, True])]\n")
    ops = [o for b in cap.batches for o in _ops(b)]
    assert "OPAQUE" in ops and "COMPRESS" not in ops


def test_reference_refuses_a_count_it_did_not_record():
    p = parse(FILTER_FOLD)
    with pytest.raises(ValueError, match="selects 4 elements but the output Y holds 5"):
        run_reference(p)


# -- the WSP rules -------------------------------------------------------------------------


def test_a_filter_fold_loops_over_the_filter_input():
    p = parse(FILTER_FOLD.replace("float64[5]", "float64[4]"))
    g = WSPGraph(p)
    assert g.domain[4] == (8,) and p[4].domain == (4,)   # ADD_REDUCE S, Y runs in X's loop
    assert g.forbidden(2, 4) is None and g.forbidden(4, 5) is None


def test_only_reductions_share_the_filter_loop():
    # every element passes: Y has X's shape, yet the map over Y may not join the filter
    p = parse("""
ARRAY X float64[8]
ARRAY M bool[8]
ARRAY Y float64[8]
ARRAY Z float64[8]
RANGE X
GREATER_EQUAL M, X, 0
COMPRESS Y, X, M
MULTIPLY Z, Y, 2
SYNC Z
""")
    g = WSPGraph(p)
    reason, detail = g.forbidden(2, 3)
    assert reason is Conflict.FILTER_OUTPUT and "instruction 3" in detail
    for algo in ALGOS:
        blocks = partition(p, algo).blocks
        assert not any(2 in b and 3 in b for b in blocks), algo


# -- kernels --------------------------------------------------------------------------------


def test_filter_fold_is_one_parallel_kernel_with_the_output_contracted():
    p = parse(FILTER_FOLD.replace("float64[5]", "float64[4]"))
    k = get_kernel(p, range(len(p)))
    assert k.contracted == ("M", "Y") and k.parallel_iterations > 0
    # the mask as a select (emit.fold_select): -0.0 leaves the sum as it was, and vectorises
    assert "acc5 = acc5 + (acc3_val if acc3_keep else np.float64(-0.0))  # 5: ADD_REDUCE S, Y" in k.source
    storage = RecordingStorage()
    out = run_plan(plan(p, [list(range(len(p)))], min_size=0), storage, Externals(), CACHE)
    assert "Y" not in storage.allocated and "M" not in storage.allocated
    assert float(out["S"]) == 1.0 + 2.0 + 3.0 + 4.0 and float(out["T"]) == 4.0


def test_a_filter_used_elsewhere_writes_its_output_compacted():
    p = parse(FILTER_FOLD.replace("float64[5]", "float64[4]").replace("DEL Y\n", "SYNC Y\n"))
    block = list(range(len(p)))
    serial = get_kernel(p, block, parallel=False)
    assert "Y" not in serial.contracted and serial.parallel_iterations == 0
    # written only below the output's length (the count NumPy selected at capture), checked after the loop
    assert "    if acc3_count < Y.shape[0]: Y[acc3_count] = acc3_val" in serial.source
    assert "if acc3_count != Y.shape[0]:" in serial.source and "raise FilterCountMismatch(2)" in serial.source
    # in parallel: each chunk compacts into its slice of a buffer, then the runs are placed
    two = get_kernel(p, block)
    assert two.parallel_iterations == 1 and "Y" not in two.contracted
    assert "if acc3_keep: acc3_buf[chunk * u4096 + acc3_count] = acc3_val; acc3_count += u1" in two.source
    assert "Y[acc3_at[acc3_chunk] + acc3_j] = acc3_buf[acc3_chunk * u4096 + acc3_j]" in two.source
    # the chunks' total is checked before any run is copied into Y
    assert two.source.index("if acc3_count != Y.shape[0]:") < two.source.index("Y[acc3_at[acc3_chunk] + acc3_j]")
    for parallel_from in (0, 1 << 30):
        out = run_plan(plan(p, [block], min_size=parallel_from), RecordingStorage(), Externals(), CACHE)
        np.testing.assert_array_equal(out["Y"], [1.0, 2.0, 3.0, 4.0])


def test_two_pass_compaction_across_many_chunks():
    n = 3 * 4096 + 17
    src = (f"import numpy as np\nx = np.sin(np.arange({n}.0))\ny = x[x > 0.3]\nz = y * 2.0\n"
           "s = np.sum(x[x < -0.5])\n")
    plain: dict = {}
    exec(src, plain)
    cap = capture(src, {})
    r = run(cap, "greedy", check=True, cache=CACHE, min_size=0)
    assert r.check.ok and r.ran is Runs.PYTHON_DRIVER
    np.testing.assert_array_equal(r.values["z"], plain["z"])


def test_a_fold_without_its_filter_reads_the_output_under_a_guard():
    p = parse(FILTER_FOLD.replace("float64[5]", "float64[4]"))
    # the fold and the maximum of X share a loop of 8; the filter ran in the block before
    blocks = [[0, 1, 2, 3], [4, 5, 6, 7, 8]]
    k = get_kernel(p, blocks[1])
    assert "if (i0) < np.uint64(Y.shape[0]): acc5 = acc5 + Y[(i0)]" in k.source
    out = run_plan(plan(p, blocks, min_size=0), RecordingStorage(), Externals(), CACHE)
    assert float(out["S"]) == 10.0 and float(out["T"]) == 4.0


def test_two_dimensional_filter_with_a_fold():
    src = ("import numpy as np\nx = np.linspace(-1.0, 1.7, 48).reshape(6, 8)\n"
           "s = x[x > 0.1].sum()\nm = np.max(x[x < 0.5])\nz = (x * 2)[x != 0].sum()\n")
    plain: dict = {}
    exec(src, plain)
    cap = capture(src, {})
    for algo in ALGOS:
        r = run(cap, algo, check=True, cache=CACHE, min_size=0)
        assert r.check.ok and r.ran is Runs.PYTHON_DRIVER, (algo, r.driver)
        np.testing.assert_allclose(r.values["s"], plain["s"], rtol=1e-12)


# -- Normalize2 -----------------------------------------------------------------------------


def _normalize2():
    with redirect_stdout(io.StringIO()):
        return capture(WORKLOADS["normalize2"].script("tiny"), {})


def test_normalize2_has_no_opaque_instruction():
    cap = _normalize2()
    (p,) = cap.batches
    assert not cap.notices
    assert _ops(p) == ["RANDOM", "ADD_REDUCE", "GREATER", "COMPRESS", "ADD_REDUCE", "DIVIDE", "DIVIDE"]


def test_normalize2_optimal_partition_is_the_slides_clustering():
    (p,) = _normalize2().batches
    for algo in ("optimal", "ilp"):
        r = partition(p, algo, "bohrium")
        assert r.proven_optimal
        compute = [tuple(i for i in b if p[i].opcode not in OpFamily.SYSTEM) for b in r.blocks]
        # sum1, the mask, the filter and sum2 in one loop (with xs's draw); nor1 and nor2 in another
        assert sorted(c for c in compute if c) == [(0, 1, 2, 3, 5), (6, 7)], algo
        first = next(b for b in r.blocks if 3 in b)
        assert get_kernel(p, first).contracted == ("gts", "t0")
        # xs drawn (256) and read again (256), sum1 and sum2 written and read, nor1 and nor2 written
        assert r.cost_elements == 256 + 2 + 256 + 2 + 2 * 256


def test_normalize2_runs_fused_under_every_algorithm():
    cap = _normalize2()
    for algo in ALGOS:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            r = run(cap, algo, check=True, cache=CACHE, min_size=0)
        assert r.ran is Runs.PYTHON_DRIVER and r.check.ok and r.max_abs_error <= 1e-12, algo


# -- random programs with filters against NumPy ---------------------------------------------

_MAPS = ["x * 2.0", "np.sqrt(np.abs(x))", "x - 0.5", "-x"]
_PREDICATES = ["{a} > 0.2", "{a} < 0.0", "np.abs({a}) > 0.5", "{a} != {a}"]
_FOLDS = ["np.sum({y})", "np.max({y})", "np.min({y})", "np.prod({y} * 0.5 + 1.0)", "{y}.sum() + np.sum({y})"]
_USES = ["{y} * 3.0", "np.cumsum({y})"]


@st.composite
def filter_sources(draw: st.DrawFn) -> str:
    """Source text: a map, filters by random predicates, folds of the filters' outputs and
    (sometimes) other uses of them, over a 1-D or 2-D array."""
    shape = draw(st.sampled_from(["(40,)", "(5, 8)"]))
    lines = ["import numpy as np", f"x = np.linspace(0.05, 2.0, 40).reshape{shape}",  # sums that cannot cancel
             f"a = {draw(st.sampled_from(_MAPS))}"]
    for k in range(draw(st.integers(1, 2))):
        src = draw(st.sampled_from(["x", "a"]))
        pred = draw(st.sampled_from(_PREDICATES)).format(a=draw(st.sampled_from(["x", "a"])))
        how = draw(st.sampled_from(["{s}[{p}]", "np.extract({p}, {s})"]))
        lines.append(f"y{k} = " + how.format(s=src, p=pred))
        fold = draw(st.sampled_from(_FOLDS))
        lines.append(f"f{k} = " + fold.format(y=f"y{k}") + f" if y{k}.size else 0.0")
        if draw(st.booleans()):
            lines.append(f"u{k} = " + draw(st.sampled_from(_USES)).format(y=f"y{k}"))
    lines.append("z = a / (1.0 + np.sum(x * x))")
    return "\n".join(lines) + "\n"


@settings(max_examples=4, deadline=None)  # each example compiles a few dozen kernels
@given(source=filter_sources())
def test_random_filter_programs_equal_numpy_under_every_algorithm(source):
    plain: dict = {}
    exec(source, plain)
    cap = capture(source, {})
    for algo in ALGOS:
        r = run(cap, algo, check=True, cache=CACHE, min_size=0)
        assert r.check.ok, (algo, r.check)
        for b, blocks in zip(cap.batches, (partition(b, algo).blocks for b in cap.batches)):
            for blk in blocks:
                filters = [b[i].outputs[0].base.name for i in blk if b[i].opcode in OpFamily.FILTER]
                if filters:
                    kernel = get_kernel(b, blk)   # every block with a filter is one kernel (raises otherwise)
                    # a filter output the cost models count as contracted is never allocated
                    counted = block_info(b, blk).contracted
                    assert {n for n in filters if n in counted} <= set(kernel.contracted), (algo, blk)


@pytest.mark.parametrize("start, passed", [(-3.0, 4), (1.0, 8)])
def test_every_legal_block_with_a_filter_is_one_kernel(start, passed):
    """Every subset of a filter program that may be a block (no fuse-preventing pair, no
    cycle with the rest as singletons) has a kernel: the graph forbids what codegen cannot.
    With every element passing, the filter's output has its input's shape: only the
    FILTER_OUTPUT edges keep the map over it out of the filter's loop."""
    p = parse(f"""
ARRAY X float64[8]
ARRAY M bool[8]
ARRAY Y float64[{passed}]
ARRAY S float64[]
ARRAY T float64[]
ARRAY Z float64[{passed}]
ARRAY W float64[8]
RANGE X, start={start}, step=1.0
GREATER M, X, 0
COMPRESS Y, X, M
ADD_REDUCE S, Y
MAXIMUM_REDUCE T, X
MULTIPLY Z, Y, 2
MULTIPLY W, X, S
DEL M
DEL Y
SYNC Z
SYNC W
""")
    g = WSPGraph(p)
    n, checked = len(p), 0
    for mask in range(1, 1 << n):
        block = [i for i in range(n) if mask >> i & 1]
        if all(p[i].opcode in OpFamily.SYSTEM for i in block):
            continue
        rest = [[i] for i in range(n) if not mask >> i & 1]
        if partition_problems(g, [block] + rest):
            continue
        get_kernel(p, block)
        checked += 1
    assert checked > 100
