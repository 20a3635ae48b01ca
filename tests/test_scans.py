"""Scans (issue 14, 004 §4): parallel chunked kernels with the maps that produce the scan's
input fused in (scanomap) and element-wise consumers of its output fused after, and the
fuse-preventing edges of what may not share a scan's block."""

from __future__ import annotations

import numpy as np
import pytest

from fusionlab import parse
from fusionlab.ir.bytecode import Opcode, OpFamily
from fusionlab.capture import capture
from fusionlab.backend.numba.codegen import get_kernel
from fusionlab.costs import block_info
from fusionlab.backend.numba.plan import plan, run_plan
from fusionlab.runtime.reference import Externals, Storage
from fusionlab.partition import partition
from fusionlab.analysis.wsp import Conflict, WSPGraph

from agreement import CACHE, check_agreement, check_blocks_compile

U = np.finfo(np.float64).eps / 2   # unit roundoff

SCANOMAP = parse("""
ARRAY X float64[10000]
ARRAY T float64[10000]
ARRAY C float64[10000]
ARRAY D float64[10000]
MULTIPLY T, X, X
ADD_ACCUMULATE C, T, axis=0
DEL T
MULTIPLY D, C, 2
DEL C
SYNC D
""")


def _sum_bound(x: np.ndarray) -> np.ndarray:
    """How far two summation orders of the prefixes of ``x`` may be apart: each is within
    (i) * u * sum(|x_0..x_i|) of the exact prefix sum (Higham, Thm 4.1), so 2 i u sum|x|."""
    i = np.arange(x.size).reshape(x.shape) if x.ndim == 1 else np.arange(1, x.size + 1)
    return 2 * (i + 1) * U * np.cumsum(np.abs(x))


def test_scanomap_is_one_kernel_with_the_map_contracted_and_three_chunks():
    block = list(range(len(SCANOMAP)))
    k = get_kernel(SCANOMAP, block)
    assert k.contracted == ("C", "T")
    assert [v.base.name for v in k.arguments] == ["X", "D"]
    # two parallel passes over the chunks, the map recomputed in the first, nothing stored there
    assert k.source.count("numba.prange") == 2 and "pass 1" in k.source and "pass 2" in k.source
    first = k.source.split("pass 1")[1].split("pass 2")[0]
    assert "T = X[i0] * X[i0]" in first and "D[i0]" not in first
    assert k.parallel_iterations == 3   # 10000 elements in chunks of 4096
    x = np.random.default_rng(1).random(10000) - 0.5
    storage = Storage({"X": x})
    out = run_plan(plan(SCANOMAP, [block], min_size=0), storage, Externals(), CACHE)
    assert storage.allocated == {"X", "D"}   # T and C never exist
    want = 2 * np.cumsum(x * x)
    assert np.all(np.abs(out["D"] - want) <= 2 * _sum_bound(x * x))


def test_every_algorithm_fuses_the_scanomap_and_the_run_never_allocates_what_it_contracts():
    x = np.random.default_rng(2).random(10000)
    seen = check_agreement([SCANOMAP], ["singleton", "greedy", "optimal", "ilp", "unintrusive", "linear"],
                           {"X": x}, rtol=1e-12, atol=0)
    assert seen["singleton"] == 0 and seen["optimal"] == 2 and seen["greedy"] == 2
    first = partition(SCANOMAP, "optimal").blocks[0]
    assert first[:5] == (0, 1, 2, 3, 4) and len(first) <= 6   # SYNC D may sit alone or join: a tie


def test_scan_edges_carry_their_reasons():
    p = parse("""
ARRAY X float64[10]
ARRAY C float64[10]
ARRAY D float64[10]
ARRAY E float64[10]
ARRAY F float64[10]
ARRAY G float64[2, 5]
ARRAY H float64[2, 5]
ARRAY s float64[]
ADD_ACCUMULATE C, X, axis=0
MULTIPLY D, C, 2
ADD_ACCUMULATE E, D, axis=0
ADD_REDUCE s, X
MAXIMUM_ACCUMULATE F, X, axis=0
ADD_REDUCE s, C
ADD_ACCUMULATE G, H, axis=0
ADD_ACCUMULATE H, H, axis=1
""".replace("ADD_ACCUMULATE H, H, axis=1", "ADD_ACCUMULATE G, H, axis=1"))
    g = WSPGraph(p)
    assert g.forbidden(0, 1) is None                              # an element-wise consumer at the same index
    assert g.forbidden(0, 2)[0] is Conflict.SCAN_RESULT          # a scan of a map of the scan
    assert g.forbidden(0, 3)[0] is Conflict.SCAN_REDUCTION       # a scan beside a reduction
    assert g.forbidden(0, 4) is None                              # two scans of one input, one axis
    assert g.forbidden(0, 5)[0] is Conflict.REDUCTION_RESULT     # a reduction of the scan's result
    assert g.forbidden(6, 7)[0] is not None                       # other axes (and G written twice)
    q = parse("ARRAY G float64[2, 5]\nARRAY H float64[2, 5]\nARRAY K float64[2, 5]\n"
              "ADD_ACCUMULATE G, H, axis=0\nADD_ACCUMULATE K, H, axis=1")
    assert WSPGraph(q).forbidden(0, 1)[0] is Conflict.SCAN_AXES
    # element-wise reads of the scan's result at another index overlap (Def. 12)
    r = parse("ARRAY X float64[5]\nARRAY C float64[5]\nARRAY D float64[4]\n"
              "ADD_ACCUMULATE C, X, axis=0\nADD D, C[1:], C[:-1]")
    assert WSPGraph(r).forbidden(0, 1)[0] is not None


SCANS = [
    (Opcode.ADD_ACCUMULATE, "float64", np.add),
    (Opcode.ADD_ACCUMULATE, "int64", np.add),
    (Opcode.ADD_ACCUMULATE, "int8", np.add),      # wraps in int8, as NumPy's accumulate
    (Opcode.MULTIPLY_ACCUMULATE, "float64", np.multiply),
    (Opcode.MULTIPLY_ACCUMULATE, "int32", np.multiply),
    (Opcode.MAXIMUM_ACCUMULATE, "float64", np.maximum),
    (Opcode.MINIMUM_ACCUMULATE, "int32", np.minimum),
    (Opcode.MAXIMUM_ACCUMULATE, "float32", np.maximum),
    (Opcode.LOGICAL_OR_ACCUMULATE, "bool", np.logical_or),
    (Opcode.LOGICAL_AND_ACCUMULATE, "bool", np.logical_and),
]
LAYOUTS = [((10000,), 0), ((5,), 0), ((37, 300), 0), ((37, 300), 1), ((4, 5, 600), 1), ((60, 70), None)]


def _data(dtype: str, shape: tuple[int, ...], op: Opcode) -> np.ndarray:
    rng = np.random.default_rng(abs(hash((dtype, shape, op.name))) % 1000)
    if dtype == "bool":
        return rng.random(shape) < (0.002 if op is Opcode.LOGICAL_OR_ACCUMULATE else 0.998)
    if op is Opcode.MULTIPLY_ACCUMULATE and dtype.startswith("float"):
        return (1 + (rng.random(shape) - 0.5) * 1e-3).astype(dtype)   # products stay in range
    if dtype.startswith("int"):
        return rng.integers(-100, 100, shape).astype(dtype)
    return (rng.random(shape) - 0.5).astype(dtype)


@pytest.mark.parametrize("shape,axis", LAYOUTS, ids=[f"{s}-axis{a}" for s, a in LAYOUTS])
@pytest.mark.parametrize("op,dtype,ufunc", SCANS, ids=[f"{o.name}-{d}" for o, d, _ in SCANS])
def test_scans_with_their_maps_equal_numpy(op, dtype, ufunc, shape, axis):
    out_shape = (int(np.prod(shape)),) if axis is None else shape
    dims = lambda s: ", ".join(map(str, s))  # noqa: E731
    pre = "LOGICAL_NOT T, X" if dtype == "bool" else "NEGATIVE T, X"
    p = parse(f"""
ARRAY X {dtype}[{dims(shape)}]
ARRAY T {dtype}[{dims(shape)}]
ARRAY C {dtype}[{dims(out_shape)}]
ARRAY D {dtype}[{dims(out_shape)}]
{pre}
{op.name} C, T{"" if axis is None else f", axis={axis}"}
DEL T
MAXIMUM D, C, C
SYNC C
SYNC D
""")
    x = _data(dtype, shape, op)
    t = np.logical_not(x) if dtype == "bool" else -x
    with np.errstate(over="ignore"):
        # NumPy accumulates small integers in the default int; C keeps its own type
        want = ufunc.accumulate(t.reshape(-1) if axis is None else t, axis=0 if axis is None else axis).astype(dtype)
    for blocks in (partition(p, "greedy").blocks, [[i] for i in range(len(p))]):
        if axis is not None:
            assert any(len([i for i in b if p[i].opcode not in OpFamily.SYSTEM]) == 3 for b in blocks) or \
                len(blocks) == len(p)
        storage = Storage({"X": x})
        out = run_plan(check_blocks_compile(p, blocks, "greedy"), storage, Externals(), CACHE)
        for name in ("C", "D"):
            got = out[name]
            if op is Opcode.ADD_ACCUMULATE and dtype.startswith("float"):
                assert np.all(np.abs(got - want) <= _prefix_bound(t, axis).reshape(want.shape)), name
            elif op is Opcode.MULTIPLY_ACCUMULATE and dtype.startswith("float"):
                # a product of k factors in any order: within 2 k u relative of the exact one
                k = np.arange(1, want.shape[0 if axis is None else axis] + 1)
                k = k.reshape([-1 if a == (0 if axis is None else axis) else 1 for a in range(want.ndim)])
                np.testing.assert_array_less(np.abs(got - want), 2 * k * U * np.abs(want) + 1e-300)
            else:
                np.testing.assert_array_equal(got, want, err_msg=name)


def _prefix_bound(t: np.ndarray, axis: int | None) -> np.ndarray:
    """:func:`_sum_bound` along ``axis`` (the flat order when None)."""
    if axis is None:
        return _sum_bound(t.reshape(-1))
    n = t.shape[axis]
    i = np.arange(1, n + 1).reshape([-1 if a == axis else 1 for a in range(t.ndim)])
    return 2 * i * U * np.cumsum(np.abs(t), axis=axis)


def test_captured_cumsum_of_a_map_followed_by_a_map_is_one_kernel():
    cap = capture("import numpy as np\nx = np.linspace(-1, 1, 20000)\n"
                  "y = np.cumsum(np.sin(x) * 2.0) / 3.0\nz = np.maximum.accumulate(np.abs(x))\n"
                  "w = np.logical_or.accumulate(x > 0.5)\n")
    ops = {ins.opcode for b in cap.batches for ins in b}
    assert {Opcode.ADD_ACCUMULATE, Opcode.MAXIMUM_ACCUMULATE, Opcode.LOGICAL_OR_ACCUMULATE} <= ops
    assert Opcode.OPAQUE not in ops
    program = cap.batches[-1]
    blocks = partition(program, "greedy").blocks
    scan_blocks = [b for b in blocks if any(program[i].opcode is Opcode.ADD_ACCUMULATE for i in b)]
    (b,) = scan_blocks
    # sin, the product, the scan and the division: one kernel, the two temporaries contracted
    assert {program[i].opcode for i in b} >= {Opcode.SIN, Opcode.MULTIPLY, Opcode.ADD_ACCUMULATE, Opcode.DIVIDE}
    assert len(block_info(program, b).contracted) >= 2
    # y sums 20000 terms with cancellation in another order than NumPy: the two prefix sums
    # may differ by 2 n u sum|2 sin x / 3| = 2 * 20000 * 1.1e-16 * 9000 = 4e-8 (seen: 6e-12)
    check_agreement(cap.batches, ["greedy", "optimal"], cap.inputs, cap.externals, rtol=1e-12, atol=4e-8)
    from fusionlab.pipeline.runner import run

    r = run(cap, "greedy", check=True, cache=CACHE, min_size=0)
    x = np.linspace(-1, 1, 20000)
    np.testing.assert_allclose(r.values["y"], np.cumsum(np.sin(x) * 2.0) / 3.0, rtol=1e-12, atol=4e-8)
    np.testing.assert_array_equal(r.values["z"], np.maximum.accumulate(np.abs(x)))
    np.testing.assert_array_equal(r.values["w"], np.logical_or.accumulate(x > 0.5))


STORED = """
ARRAY X {t}[10000]
ARRAY T {t}[10000]
ARRAY C {t}[10000]
ARRAY D {t}[10000]
{feed}
{scan} C, T, axis=0
MAXIMUM D, C, {last}
DEL T
SYNC C
SYNC D
"""


@pytest.mark.parametrize("scan,dtype,ufunc", [(Opcode.ADD_ACCUMULATE, "float64", np.add),
                                              (Opcode.ADD_ACCUMULATE, "int8", np.add),
                                              (Opcode.MAXIMUM_ACCUMULATE, "int32", np.maximum)])
@pytest.mark.parametrize("reread", [False, True], ids=["stored", "recomputed"])
def test_a_stored_scan_output_holds_the_local_scan_so_the_second_pass_skips_the_feeding_map(scan, dtype, ufunc,
                                                                                             reread):
    # the map feeding the scan (NEGATIVE) runs once when the scan's output is stored anyway;
    # a map result the consumer reads too (T, when reread) must be recomputed in pass 2, and
    # so must the map when the output is narrower than the accumulator (int8 sums in int64)
    p = parse(STORED.format(t=dtype, feed="NEGATIVE T, X", scan=scan.name, last="T" if reread else "C"))
    k = get_kernel(p, range(len(p)))
    first, second = k.source.split("pass 1")[1].split("pass 2")
    stored = not reread and dtype != "int8"
    assert "-X[i0]" in first
    assert ("-X[i0]" in second) is not stored
    assert ("C[i0] = acc2  # 2: the chunk's local scan" in first) is stored
    assert ("acc2_c = acc2_tot[chunk]" in second) is stored
    x = _data(dtype, (10000,), scan)
    out = run_plan(plan(p, [list(range(len(p)))], min_size=0), Storage({"X": x}), Externals(), CACHE)
    with np.errstate(over="ignore"):
        want = ufunc.accumulate(-x).astype(dtype)
    if dtype == "float64":
        assert np.all(np.abs(out["C"] - want) <= _prefix_bound(-x, 0))
    else:   # integer scans are exact (int8 wraps as NumPy's accumulate in int8)
        np.testing.assert_array_equal(out["C"], want)
    np.testing.assert_array_equal(out["D"], np.maximum(out["C"], -x if reread else out["C"]))


def test_an_in_place_scan_beside_a_map_of_its_old_input_recomputes_in_pass_two():
    # pass 1 would overwrite X with each chunk's local scan before pass 2's E = 3 X reads it
    p = parse("ARRAY X float64[10000]\nARRAY T float64[10000]\nARRAY E float64[10000]\n"
              "NEGATIVE T, X\nMULTIPLY E, X, 3\nADD_ACCUMULATE X, T, axis=0\nDEL T\nSYNC X\nSYNC E")
    block = list(range(len(p)))
    k = get_kernel(p, block)
    assert "local scan" not in k.source
    x = np.random.default_rng(4).random(10000)
    out = run_plan(plan(p, [block], min_size=0), Storage({"X": x.copy()}), Externals(), CACHE)
    np.testing.assert_array_equal(out["E"], 3 * x)
    assert np.all(np.abs(out["X"] - np.cumsum(-x)) <= _sum_bound(-x))


@pytest.mark.parametrize("consumer,stored", [("MULTIPLY D, C, 3", True), ("MULTIPLY D, C, X", False)],
                         ids=["feeder-unused-after", "feeder-read-after"])
def test_a_stored_feeding_map_is_written_by_pass_one(consumer, stored):
    # X = sin(X) in place feeds the scan: pass 1 computes and stores it once, pass 2 never
    # reads X again — unless a consumer after the scan reads X (then everything recomputes)
    p = parse("ARRAY X float64[10000]\nARRAY T float64[10000]\nARRAY C float64[10000]\nARRAY D float64[10000]\n"
              f"SIN X, X\nMULTIPLY T, X, 2\nADD_ACCUMULATE C, T, axis=0\n{consumer}\nDEL T\nSYNC X\nSYNC C\nSYNC D")
    block = list(range(len(p)))
    first, second = get_kernel(p, block).source.split("pass 1")[1].split("pass 2")
    assert ("X[i0] = X_w" in first) is stored and ("np.sin" in second) is not stored
    x = np.random.default_rng(5).random(10000)
    out = run_plan(plan(p, [block], min_size=0), Storage({"X": x.copy()}), Externals(), CACHE)
    # one thread runs the strip-mined form, whose vectorised sine is within 2 ulp of libm's
    assert np.all(np.abs(out["X"] - np.sin(x)) <= 2 * np.spacing(np.sin(x)))
    assert np.all(np.abs(out["C"] - np.cumsum(2 * np.sin(x))) <= 2 * _sum_bound(2 * np.sin(x)))
    np.testing.assert_array_equal(out["D"], out["C"] * (3 if stored else np.sin(x)))
