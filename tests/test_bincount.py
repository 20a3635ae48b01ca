"""Histograms (BINCOUNT, ``np.bincount``): the instruction's rules, capture, the reference
executor and the kernels against NumPy (dtypes, weights, minlength, empty input, many
chunks, views), fusion with the map producing the values (the index array contracted), the
HISTOGRAM_COMPANION rule, values outside the recorded bins at run time, and the corpus's
histogram program."""

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
from fusionlab.capture import CaptureError, capture
from fusionlab.backend.numba.codegen import get_kernel
from fusionlab.costs import check_monotonic, get_cost_model
from fusionlab.backend.numba.plan import KernelCache
from fusionlab.runtime.reference import bincount, run_reference
from fusionlab.pipeline.runner import run
from fusionlab.ir.text import BytecodeError
from fusionlab.costs.timemodel import TimeModel, default_figures, explain
from fusionlab.analysis.wsp import Conflict, WSPGraph
from fusionlab.backend.numba.driver import Runs

from agreement import check_agreement
from test_numba import CACHE


def _capture(src: str):  # type: ignore[no-untyped-def]
    with redirect_stdout(io.StringIO()):
        return capture(src, {"__name__": "__main__"})


def _plain(src: str) -> dict:
    ns: dict = {}
    exec(src, ns)
    return ns


def _ops(cap) -> list[str]:
    return [ins.opcode.name for b in cap.batches for ins in b if ins.opcode not in OpFamily.SYSTEM]


def _run_against_numpy(src: str, names: tuple[str, ...], min_size: int = 0, driver: str = "python") -> object:
    """Capture ``src``, run it fused with its inputs, compare ``names`` with plain NumPy
    exactly (counts) or to 1e-12 relative (weight sums: chunked partial sums)."""
    cap = _capture(src)
    got = run(cap, "greedy", min_size=min_size, cache=CACHE, driver=driver)
    want = _plain(src)
    for name in names:
        w, g = np.asarray(want[name]), np.asarray(got.values[name])
        assert g.dtype == w.dtype and g.shape == w.shape, name
        if w.dtype.kind == "f":
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
        else:
            np.testing.assert_array_equal(g, w)
    return got


# -- the instruction --------------------------------------------------------------------------


def test_bincount_instruction_rules():
    head = ("ARRAY X int32[6]\nARRAY F float64[6]\nARRAY W float32[6]\nARRAY V float32[5]\nARRAY M int64[2,3]\n"
            "ARRAY H int64[4]\nARRAY G float64[4]\nARRAY U float32[6]\nARRAY C complex128[6]\n")
    p = parse(head + "BINCOUNT H, X\nBINCOUNT G, X, W\nBINCOUNT G, X, X")
    assert [ins.family for ins in p] == ["histogram"] * 3 and [ins.domain for ins in p] == [(6,)] * 3
    assert parse(p.to_text()) == p
    bad = {
        "BINCOUNT H, F": "np.bincount counts integers",
        "BINCOUNT H, U": "np.bincount counts integers",
        "BINCOUNT H, M": "np.bincount takes a 1-D array",
        "BINCOUNT G, X": "np.bincount gives int64 \\(counts\\)",
        "BINCOUNT H, X, W": "np.bincount gives float64 \\(the weights. sums\\)",
        "BINCOUNT G, X, V": "must have one shape",
        "BINCOUNT G, X, C": "real weights",
        "BINCOUNT H, X, 1": "with arrays only",
        "BINCOUNT H": "with arrays only",
        "BINCOUNT H, X, axis=0": "does not take axis=",
    }
    for line, message in bad.items():
        with pytest.raises(BytecodeError, match=message):
            parse(head + line)


def test_reference_bincount_raises_outside_the_bins():
    assert bincount(np.array([True, True, False]), None, 3).tolist() == [1, 2, 0]
    for x in ([-1, 0], [0, 4]):
        with pytest.raises(ValueError, match="outside"):
            bincount(np.array(x), None, 4)
    p = parse("ARRAY X int64[3]\nARRAY H int64[2]\nBINCOUNT H, X\nSYNC H")
    assert run_reference(p, inputs={"X": np.array([1, 1, 0])})["H"].tolist() == [1, 2]
    with pytest.raises(ValueError, match="outside"):
        run_reference(p, inputs={"X": np.array([1, 2, 0])})


# -- capture ----------------------------------------------------------------------------------


def test_capture_records_bincount_and_keeps_what_numpy_refuses_opaque():
    cap = _capture("import numpy as np\nx = np.arange(10) % 3\nh = np.bincount(x, minlength=2)\n")
    assert _ops(cap)[-1] == "BINCOUNT" and cap.namespace["h"].tolist() == [4, 3, 3]
    # a float array (TypeError), a negative value, a uint64 past intp (ValueError): NumPy runs them
    for src, error in (("np.bincount(np.arange(4.0))", TypeError),
                       ("np.bincount(np.arange(4) - 2)", ValueError),
                       ("np.bincount(np.array([2**63 + 1], dtype=np.uint64))", ValueError),
                       ("np.bincount(np.arange(4), np.arange(4) * 1j)", TypeError)):
        with pytest.raises(error):
            _plain("import numpy as np\n" + src)
        with pytest.raises(CaptureError, match=error.__name__):   # NumPy's own error, from its own call
            _capture(f"import numpy as np\nh = {src}\n")
    cap = _capture("import numpy as np\nx = np.arange(4.0)\nh = np.bincount(x.astype(np.int8), x > 1)\n")
    assert _ops(cap)[-1] == "BINCOUNT" and cap.namespace["h"].tolist() == [0.0, 0.0, 1.0, 1.0]


@pytest.mark.parametrize("src", [
    "h = np.bincount(x, weights=np.ones(3))",          # weights of another length: ValueError
    "h = np.bincount(x, minlength=-1)",                # ValueError
])
def test_capture_of_a_refused_call_raises_numpys_error(src):
    pre = "import numpy as np\nx = np.arange(4) % 2\n"
    with pytest.raises(ValueError):
        _plain(pre + src)
    with pytest.raises(CaptureError, match="ValueError"):
        _capture(pre + src)


# -- kernels against NumPy --------------------------------------------------------------------

DTYPES = ["uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64", "bool"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_bincount_of_each_value_dtype_matches_numpy(dtype):
    src = (f"import numpy as np\nrng = np.random.default_rng(1)\nx = (rng.random(20000) * 7).astype(np.{dtype})\n"
           "h = np.bincount(x)\nk = np.bincount(x, minlength=12)\n")
    got = _run_against_numpy(src, ("h", "k"))
    assert got.fallbacks == []


@pytest.mark.parametrize("weights", ["np.float32", "np.float64", "np.int32", "np.int64", "np.bool_"])
def test_weighted_bincount_matches_numpy(weights):
    src = ("import numpy as np\nrng = np.random.default_rng(2)\nx = (rng.random(30000) * 50).astype(np.int32)\n"
           f"w = (rng.random(30000) * 10).astype({weights})\nh = np.bincount(x, weights=w, minlength=3)\n"
           "s = np.bincount(x, w * 2)\n")
    _run_against_numpy(src, ("h", "s"))


@pytest.mark.parametrize("src", [
    "x = np.arange(9) % 4\nh = np.bincount(x, minlength=2)",           # minlength below max + 1
    "x = np.arange(9) % 4\nh = np.bincount(x, minlength=40)",          # above
    "x = np.zeros(0, dtype=np.int64)\nh = np.bincount(x, minlength=5)",   # empty input
    "x = np.arange(100000) % 1000\nh = np.bincount(x[::3])\nk = np.bincount(x[::-7], minlength=1200)",   # views
    "x = np.arange(200000) % 5000\nh = np.bincount(x)",    # more bins than a chunk: one serial count
    "x = np.arange(60000) % 300\nw = np.sqrt(np.arange(120000.0))\nh = np.bincount(x[::-1], weights=w[::2])",
    "x = (np.arange(1_000_003) * 7919) % 256\nh = np.bincount(x)",   # 245 chunks
])
def test_bincount_shapes_and_views_match_numpy(src):
    _run_against_numpy("import numpy as np\n" + src + "\n", ("h",) + (("k",) if "k =" in src else ()))


def test_bincount_through_the_compiled_driver():
    src = ("import numpy as np\nx = (np.arange(50000) * 31) % 97\nw = np.sin(np.arange(50000.0))\n"
           "h = np.bincount(x)\ns = np.bincount(x, w)\n")
    got = _run_against_numpy(src, ("h", "s"), min_size=4096, driver="numba")
    assert got.ran is Runs.COMPILED_DRIVER


@settings(max_examples=12, deadline=None)
@given(st.lists(st.integers(0, 40), max_size=300), st.integers(0, 50), st.booleans(),
       st.sampled_from(["int8", "uint16", "int64"]))
def test_random_bincounts_match_numpy(values, minlength, weighted, dtype):
    x = np.array(values, dtype=dtype)
    src = (f"import numpy as np\nx = np.array({values!r}, dtype=np.{dtype})\n"
           + ("w = np.cos(np.arange(x.size) * 1.0)\nh = np.bincount(x, w, minlength=m)\n" if weighted
              else "h = np.bincount(x + 0, minlength=m)\n"))
    src = src.replace("m)", f"{minlength})")
    if x.size == 0 and minlength == 0:
        return   # zero bins: NumPy gives an empty array, no instruction is recorded
    _run_against_numpy(src, ("h",), min_size=64)


# -- fusion -----------------------------------------------------------------------------------

HISTOGRAM = """
ARRAY S float64[100000]
ARRAY T float64[100000]
ARRAY I int64[100000]
ARRAY H int64[32]
MULTIPLY T, S, 32
COPY I, T
DEL T
MINIMUM I, I, 31
BINCOUNT H, I
DEL I
SYNC H
"""


def test_the_map_producing_the_values_fuses_and_the_index_is_contracted():
    p = parse(HISTOGRAM)
    got = run(p, "greedy", cache=CACHE, inputs={"S": np.linspace(0.0, 0.999, 100000)})
    (plan,) = got.plans
    kernels = [b for b in plan.blocks if b.compiled is not None]
    assert len(kernels) == 1 and set(kernels[0].instructions) == set(range(len(p)))
    assert kernels[0].kernel.contracted == ("I", "T")
    assert kernels[0].kernel.parallel_iterations == 25     # 100000 values in chunks of 4096
    want = np.bincount(np.minimum((np.linspace(0.0, 0.999, 100000) * 32).astype(np.int64), 31), minlength=32)
    np.testing.assert_array_equal(got.values["H"], want)
    check_agreement([p], ["singleton", "greedy", "optimal", "ilp"], inputs={"S": np.linspace(0.0, 0.999, 100000)})


def test_captured_histogram_of_a_scaled_map_is_one_kernel_with_the_index_contracted():
    # the draws (RANDOM) and the lookup (a GATHER of the scaled values) share the counting loop
    src = ("import numpy as np\ns = np.random.default_rng(3).random(50000)\nlut = np.arange(64) % 7\n"
           "h = np.bincount(lut[np.minimum((s * 64).astype(np.int64), 63)], minlength=64)\n")
    got = _run_against_numpy(src, ("h",), min_size=4096)
    (plan,) = [p for p in got.plans if any(ins.opcode is Opcode.BINCOUNT for ins in p.program)]
    (block,) = [b for b in plan.blocks if any(plan.program[i].opcode is Opcode.BINCOUNT for i in b.instructions)]
    ops = [plan.program[i].opcode.name for i in block.instructions if plan.program[i].opcode not in OpFamily.SYSTEM]
    assert ops == ["RANDOM", "MULTIPLY", "COPY", "MINIMUM", "GATHER", "BINCOUNT"]
    index = plan.program[[i for i in block.instructions if plan.program[i].opcode is Opcode.BINCOUNT][0]].views_in[0]
    assert index.base.name in block.compiled.contracted and len(block.compiled.contracted) == 4


def test_cost_models_price_a_histogram_block():
    p = parse(HISTOGRAM)
    whole = [list(range(len(p)))]
    # S read (800000 bytes), H written (256); T and I contracted
    assert get_cost_model("bohrium").cost(p, whole) == 800000 + 256
    b = explain(p, whole, TimeModel(default_figures()))[0]
    assert b.read_bytes == 800000 and b.write_bytes == 256
    wide = parse(HISTOGRAM.replace("int64[32]", "int64[4000]").replace("31", "3999").replace(", 32", ", 4000"))
    more = explain(wide, whole, TimeModel(default_figures()))[0]
    assert more.compute > b.compute    # bins per chunk zeroed and summed
    for name in ["bohrium", "max_contract", "max_locality", "time"]:
        assert check_monotonic(get_cost_model(name), p) is None, name


def test_a_histogram_keeps_its_own_kernel_beside_a_reduction_and_its_readers():
    p = parse("ARRAY X int64[64]\nARRAY H int64[8]\nARRAY S int64[]\nARRAY Y int64[64]\n"
              "RANGE X\nREMAINDER X, X, 8\nBINCOUNT H, X\nADD_REDUCE S, X\nADD Y, X, 1\nSYNC H\nSYNC S\nSYNC Y")
    g = WSPGraph(p)
    assert g.forbidden(2, 3)[0] is Conflict.HISTOGRAM_COMPANION
    assert g.forbidden(0, 2) is None and g.forbidden(1, 2) is None and g.forbidden(2, 4) is None   # RANGE, maps
    q = parse("ARRAY X int64[8]\nARRAY H int64[8]\nARRAY Y int64[8]\nBINCOUNT H, X\nADD Y, H, 1\nSYNC Y")
    assert WSPGraph(q).forbidden(0, 1)[0] is Conflict.REDUCTION_RESULT
    check_agreement([p], ["greedy", "optimal"], inputs={})


def test_kernel_source_counts_per_chunk_and_raises_outside_the_bins():
    src = get_kernel(parse(HISTOGRAM), list(range(7))).source
    assert "acc5_rows[chunk]" in src and "raise HistogramOutOfRange(4)" in src and "numba.prange" in src


@pytest.mark.parametrize("driver", ["python", "numba"])
def test_values_outside_the_recorded_bins_raise_at_run_time(driver):
    p = parse("ARRAY X int32[10000]\nARRAY I int32[10000]\nARRAY H int64[16]\nADD I, X, 0\nBINCOUNT H, I\n"
              "DEL I\nSYNC H")
    good = np.arange(10000, dtype=np.int32) % 16
    assert run(p, "greedy", min_size=0, cache=CACHE, driver=driver, inputs={"X": good}).values["H"].tolist() \
        == [625] * 16
    cache = KernelCache()
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # NumPy's error, not a kernel that "could not compile"
        for bad in (good - 1, good + 1):   # a negative value; a value past the last bin
            with pytest.raises(ValueError, match="outside"):
                run(p, "greedy", min_size=0, cache=cache, driver=driver, inputs={"X": bad})
        again = run(p, "greedy", min_size=0, cache=cache, driver=driver, inputs={"X": good})
    assert again.values["H"].tolist() == [625] * 16 and not cache.failed and again.kernels == 1
    assert again.ran is (Runs.COMPILED_DRIVER if driver == "numba" else Runs.PYTHON_DRIVER)


# -- the corpus ---------------------------------------------------------------------------------


def test_histogram_corpus_program_counts_in_a_kernel_and_checks():
    from fusionlab.workloads import CORPUS

    cap = _capture(CORPUS["histogram_equalize"].script("tiny"))
    ops = [ins.opcode for b in cap.batches for ins in b]
    assert Opcode.BINCOUNT in ops and Opcode.OPAQUE not in ops
    got = run(cap, "greedy", check=True, min_size=0, cache=CACHE)
    assert got.check is not None and got.check.ok
    assert not any("BINCOUNT" in f for f in got.fallbacks)


def test_explorer_report_of_a_histogram_program_follows_its_schema():
    from fusionlab.explore.report import get_report, validate_report

    report = get_report(parse(HISTOGRAM), algorithms=("greedy",), cost_models=("bohrium",))
    validate_report(report)
    assert "histogram" in {ins["family"] for ins in report["program"]["instructions"]}


def test_cli_run_check_passes_on_the_histogram_corpus_program(capsys):
    from fusionlab.cli import main

    assert main(["run", "histogram_equalize", "--check", "--min-size", "0"]) == 0
    out = capsys.readouterr().out
    assert "0 differ" in out and "blocks run by NumPy" in out


def test_a_chunked_histogram_counts_each_chunk_from_its_buffer_after_the_element_loop():
    src = get_kernel(parse(HISTOGRAM), list(range(7))).source
    # the element loop only writes the bins (and keeps their least and largest): no branch,
    # no store into the bins, so its map vectorises; the chunk's count follows it
    body = src[src.index("for i0 in range("):src.index("if acc5_lo < 0 or acc5_hi >= acc5_n")]
    assert "acc5_kb[i0 - acc5_at] = acc5_k" in body and "acc5[" not in body and " if " not in body
    assert "acc5[np.uint64(acc5_kb[acc5_j])] += 1" in src


@pytest.mark.parametrize("n", [1, 4095, 4096, 4097, 8193, 20000])
@pytest.mark.parametrize("weighted", [False, True])
def test_chunk_boundaries_and_weights_with_nan_match_numpy(n, weighted):
    # the weights' sums per bin: each chunk's in element order, then the chunks' in order
    src = (f"import numpy as np\nx = (np.arange({n}) * 7919) % 37\nw = np.cos(np.arange({n}) * 0.5)\n"
           "w[::1001] = np.nan\n" + ("h = np.bincount(x + 0, w * 2.0, minlength=40)\n" if weighted
                                    else "h = np.bincount(x + 0, minlength=40)\n"))
    _run_against_numpy(src, ("h",), min_size=0, driver="numba")


def test_a_value_outside_the_bins_in_a_late_chunk_raises_and_the_kernel_stays_usable():
    p = parse("ARRAY X int64[20000]\nARRAY I int64[20000]\nARRAY H int64[16]\nADD I, X, 0\nBINCOUNT H, I\n"
              "DEL I\nSYNC H")
    good = np.arange(20000, dtype=np.int64) % 16
    bad = good.copy()
    bad[-3] = 16   # the fifth chunk's last elements
    cache = KernelCache()
    with pytest.raises(ValueError, match="outside"):
        run(p, "greedy", min_size=0, cache=cache, driver="numba", inputs={"X": bad})
    again = run(p, "greedy", min_size=0, cache=cache, driver="numba", inputs={"X": good})
    assert again.values["H"].tolist() == [1250] * 16 and not cache.failed
