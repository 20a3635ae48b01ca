"""The run's driver (one generated function calling every kernel) against the reference
executor and against the block-by-block executor: values, memory, fallbacks."""

from __future__ import annotations

import dataclasses
import io
import re
import warnings
from contextlib import redirect_stdout

import numpy as np
import pytest
from hypothesis import given, settings

from fusionlab import parse
from fusionlab.capture import capture
from fusionlab.backend.numba.codegen import Unsupported
from fusionlab.backend.numba.driver import Driver, get_driver
from fusionlab.backend.numba.plan import KernelCache, plan
from fusionlab.runtime.reference import Externals, run_reference
from fusionlab.pipeline.runner import run
from fusionlab.workloads import WORKLOADS
from fusionlab.backend.numba.driver import Runs

from test_capture import numpy_sources
from test_numba import CACHE, FIG1
from kernels import CHECKED   # the workloads' runs: bounds-checked kernels and drivers
from kernels import planned

BENCHMARKED = ["black_scholes", "heat_equation", "leibnitz_pi", "rosenbrock", "monte_carlo_pi", "shallow_water",
               "sor", "stencil_27pt"]


def _capture(name: str, preset: str = "tiny"):  # type: ignore[no-untyped-def]
    with redirect_stdout(io.StringIO()):
        return capture(WORKLOADS[name].script(preset), {})


def _driver(cap, min_size: int = 0, mode: str = "python", cache: KernelCache = CACHE) -> Driver:  # type: ignore[no-untyped-def]
    plans, inputs, externals = planned(cap, min_size)
    return Driver(plans, externals, cache, inputs, mode=mode)


@pytest.mark.parametrize("name", list(WORKLOADS))
def test_every_workload_runs_from_its_python_driver(name):
    cap = _capture(name)
    for algorithm, min_size in (("linear", 0), ("greedy", 0), ("greedy", 1 << 30), ("greedy", 4096)):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            r = run(cap, algorithm, check=True, cache=CHECKED, min_size=min_size)
        assert r.ran is Runs.PYTHON_DRIVER, (algorithm, min_size, r.driver)
        assert r.max_abs_error <= 1e-9, (algorithm, min_size, r.max_abs_error)


# every algorithm's partition of every workload, but the two largest captures (2,797 and
# 1,005 instructions at tiny: ILP alone takes 210 s on each; their linear and greedy
# partitions are checked above and in test_numba.py)
@pytest.mark.parametrize("name", [n for n in WORKLOADS if n not in ("lattice_boltzmann_d3q19", "water_ice")])
def test_every_algorithm_partition_runs_from_the_driver(name):
    cap = _capture(name)
    for algorithm in ("singleton", "unintrusive", "optimal", "ilp"):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            r = run(cap, algorithm, check=True, cache=CHECKED, min_size=0)
        assert r.max_abs_error <= 1e-9, (algorithm, r.max_abs_error)
        assert r.ran is Runs.PYTHON_DRIVER, (algorithm, r.driver)


@pytest.mark.parametrize("name", BENCHMARKED + ["fig3"])
def test_compiled_drivers_equal_the_reference(name):
    cap = _capture(name)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = run(cap, "greedy", check=True, cache=CACHE, min_size=4096, driver="numba")
    assert r.ran is Runs.COMPILED_DRIVER and r.max_abs_error <= 1e-9


@pytest.mark.parametrize("mode", ["python", "numba"])
@settings(max_examples=12, deadline=None)
@given(source=numpy_sources())
def test_random_programs_under_the_driver(source, mode):
    cap = capture(source, {})
    r = run(cap, "greedy", check=True, cache=CACHE, min_size=0, driver=mode)
    assert r.max_abs_error <= 1e-9
    # and the same values as block by block
    b = run(cap, "greedy", cache=CACHE, min_size=0, driver="blocks")
    assert b.ran is Runs.BLOCKS
    for k, v in b.values.items():
        np.testing.assert_allclose(np.asarray(r.values[k]), np.asarray(v), rtol=1e-12, atol=1e-12)


def test_monte_carlo_driver_is_one_call_per_batch_reading_the_lent_draws():
    cap = _capture("monte_carlo_pi")
    d = _driver(cap, min_size=4096)
    src = d.spec.source
    batches = len(cap.batches)
    assert src.count("# batch ") == batches
    assert src.count("k_") == batches - 1   # one kernel per iteration; the last batch only syncs
    # every draw is an argument read in place: no buffers, no copies. x and y die in the
    # next batch (rebound), so they are freed early (fusionlab.passes.deadbases): each iteration's
    # draws, map and count are one kernel reading the draws as its random arguments
    assert d.spec.slots == () and ".copy()" not in src
    assert [k for k, flat in d.spec.draws] == sorted(cap.externals.arrays)
    assert len(re.findall(r"^    k_\w+\(x0\[0:1\], q\d+, q\d+, ", src, re.M)) == batches - 1
    before = {k: v.copy() for k, v in cap.externals.arrays.items()}
    out = d()
    for k, v in before.items():
        np.testing.assert_array_equal(cap.externals.arrays[k], v)
    ref = _driver(cap, min_size=4096, mode="blocks")()
    assert set(out) == set(ref) and len(ref) == 3 and all(int(out[k]) == int(ref[k]) for k in ref)


def test_contracted_temporaries_never_reach_the_driver():
    # FIG1: T = B * A; A += T; DEL T; SYNC A, fused into one block that contracts T
    d = get_driver([plan(FIG1, [[0, 1, 2, 3]], min_size=0)], inputs=["A", "B"])
    assert [b.name for b in d.inputs] == ["B", "A"]   # in the order the kernel takes them
    assert d.slots == (("float64", 10000),)   # B: an unsynced input; A is synced, allocated inside
    assert [b.name for b in d.returns] == ["A"]
    # the driver's variables are its own (x0, x1, ...); comments name the bases they hold
    assert not re.search(r"# T\b", d.source) and "# B: 10000 float64" in d.source


def test_freed_memory_is_reused_within_a_run():
    # two temporaries of one type and size, the second allocated after the first is freed
    p = parse("""
ARRAY X float64[5000]
ARRAY U float64[5000]
ARRAY V float64[5000]
ARRAY S float64[]
RANGE X
MULTIPLY U, X, 2.0
SUM S, U, axis=None
DEL U
SYNC S
ADD V, X, 1.0
ADD_REDUCE S, V, axis=None
DEL V
SYNC S
""")
    blocks = [[0], [1], [2], [3], [4], [5], [6], [7], [8]]
    d = get_driver([plan(p, blocks, min_size=0)])
    # X and U, then V in U's buffer: small buffers are slices of one arena per type
    assert d.slots == (("float64", 10000),) and d.own_slots == 0
    assert re.search(r"= ar0\[5000:10000\]  # U:", d.source) and re.search(r"= ar0\[5000:10000\]  # V:", d.source)
    # S is synced, written again after its SYNC: copied first, both values returned intact
    # (S's two values are rows of one new array: small synced values share one, row by row)
    first = re.search(r"^    (x\d+) = m0\[0\]  # S: synced", d.source, re.M)
    second = re.search(r"^    (x\d+) = m0\[1\]  # S: synced", d.source, re.M)
    assert first and second and first[1] != second[1]
    assert f"{second[1]}[:] = {first[1]}  # copied before it is written" in d.source
    assert d.returned == (("fresh", 0, 1),)   # the last value of S: the second row
    out = Driver([plan(p, blocks, min_size=0)], Externals(), CACHE)()
    want = run_reference(p)
    assert float(out["S"]) == float(want["S"]) == float(np.sum(np.arange(5000.0) + 1))


def test_synced_values_survive_later_runs_and_later_writes():
    first = parse("ARRAY A float64[5000]\nRANGE A\nSYNC A")
    second = parse("ARRAY A float64[5000]\nADD A, A, 1.0\nSYNC A")
    plans = [plan(first, [[0, 1]], min_size=0), plan(second, [[0], [1]], min_size=0)]
    for mode in ("python", "numba"):
        d = Driver(plans, Externals(), CACHE, mode=mode)
        out = d()
        kept = out["A"].copy()
        np.testing.assert_array_equal(kept, np.arange(5000.0) + 1)
        again = d()   # a second run reuses the slots, never the arrays it returned
        np.testing.assert_array_equal(out["A"], kept)
        np.testing.assert_array_equal(again["A"], kept)
        assert again["A"] is not out["A"] and not np.shares_memory(again["A"], out["A"])


def test_inputs_are_copied_in_never_written():
    p = parse("ARRAY A float64[6000]\nARRAY B float64[6000]\nADD A, A, B\nMULTIPLY B, B, 2.0\nSYNC A\nSYNC B")
    inputs = {"A": np.arange(6000.0), "B": np.ones(6000)}
    kept = {k: v.copy() for k, v in inputs.items()}
    for mode in ("python", "numba", "blocks"):
        out = Driver([plan(p, [[0, 1, 2, 3]], min_size=0)], Externals(), CACHE, inputs, mode=mode)()
        want = run_reference(p, inputs=inputs)
        for k in want:
            np.testing.assert_array_equal(out[k], want[k])
        for k, v in kept.items():
            np.testing.assert_array_equal(inputs[k], v)


def test_strided_and_reversed_views_go_in_as_numpy_makes_them():
    # an axis reduction's output is passed as its own view: here strided, and reversed
    p = parse("""
ARRAY G float64[60, 80]
ARRAY H float64[120]
RANGE G
ADD_REDUCE H[::2], G, axis=1
MAXIMUM_REDUCE H[119::-2], G, axis=1
SYNC H
""")
    pl = plan(p, [[0], [1], [2], [3]], min_size=0)
    d = get_driver([pl])
    assert re.search(r"as_strided\(x\d+\[0:\], \(60,\), \(16,\)\)", d.source)
    assert re.search(r"as_strided\(x\d+\[119:\], \(60,\), \(-16,\)\)", d.source)
    want = run_reference(p)["H"]
    for mode in ("python", "numba"):
        np.testing.assert_array_equal(Driver([pl], Externals(), CACHE, mode=mode)()["H"], want)


def test_no_driver_when_numpy_must_run_a_block():
    # np.sort has no bytecode: an OPAQUE instruction NumPy runs between kernels
    cap = capture("import numpy as np\nx = np.linspace(-1.0, 1.0, 64)\ny = np.sort(x * x) + 1.0\n")
    d = _driver(cap)
    assert d.spec is None and d.kind is Runs.BLOCKS and "OPAQUE runs with NumPy" in d.reason
    r = run(cap, "greedy", check=True, cache=CACHE, min_size=0)
    assert r.ran is Runs.BLOCKS and r.max_abs_error <= 1e-9


def test_a_compiled_driver_has_a_call_budget():
    cap = _capture("shallow_water")
    plans, inputs, externals = planned(cap, 0)
    with pytest.raises(Unsupported, match="more than 3 kernel call sites"):
        get_driver(plans, externals, list(inputs), max_calls=3)
    d = Driver(plans, externals, CACHE, inputs, mode="numba", max_calls=3)
    # over the budget, the same driver runs as Python (not block by block), and says why
    assert d.kind is Runs.PYTHON_DRIVER and "more than 3 kernel call sites" in d.reason and "Python form" in d.reason
    want = Driver(plans, externals, CACHE, inputs, mode="blocks")()
    got = d()
    assert sorted(got) == sorted(want) and all(np.allclose(got[k], want[k]) for k in want)
    # the Python driver has no budget: it compiles nothing
    assert Driver(plans, externals, CACHE, inputs, max_calls=3).kind is Runs.PYTHON_DRIVER


def test_over_the_call_budget_an_opaque_block_after_it_runs_block_by_block():
    # the budget is hit before the walk reaches the block NumPy runs (Gaussian elimination:
    # many row kernels, then a pivot swap by fancy indexing): block by block, not an error
    src = ("import numpy as np\nx = np.linspace(-1.0, 1.0, 64)\n"
           + "".join(f"y{k} = np.sin(x[:{60 - k}]) * {k + 2}.0\n" for k in range(5))   # five shapes: five kernels
           + "z = np.sort(x) + 1.0\n")
    cap = capture(src)
    plans, inputs, externals = planned(cap, 0)
    d = Driver(plans, externals, CACHE, inputs, mode="numba", max_calls=3)
    assert d.spec is None and d.kind is Runs.BLOCKS
    assert "OPAQUE runs with NumPy" in d.reason
    want = Driver(plans, externals, CACHE, inputs, mode="blocks")()
    got = d()
    assert sorted(got) == sorted(want) and all(np.array_equal(got[k], want[k]) for k in want)


def test_a_driver_numba_refuses_falls_back_with_a_warning(tmp_path, monkeypatch):
    import fusionlab.backend.numba.driver as drv

    p = parse("ARRAY A float64[5000]\nARRAY B float64[5000]\nRANGE A\nMULTIPLY B, A, 2.0\nSYNC B")
    pl = plan(p, [[0], [1, 2]], min_size=0)
    real = drv._emit

    def broken(*args):  # type: ignore[no-untyped-def]
        spec = real(*args)
        return dataclasses.replace(spec, source=spec.source.replace("return (", "return (undefined_name, "))

    monkeypatch.setattr(drv, "_emit", broken)
    d = Driver([pl], Externals(), KernelCache(directory=tmp_path), mode="numba")
    with pytest.warns(RuntimeWarning, match="the compiled driver failed .*; running block by block"):
        out = d()
    np.testing.assert_array_equal(out["B"], np.arange(5000.0) * 2)
    assert d.kind is Runs.BLOCKS and d.reason.startswith("the compiled driver failed")
    np.testing.assert_array_equal(d()["B"], np.arange(5000.0) * 2)   # and stays so, silently


def test_zero_dimensional_blocks_are_straight_line_kernels():
    p = parse("""
ARRAY A float64[]
ARRAY B float64[]
ARRAY C float64[]
ARRAY S float64[]
COPY A, 2.0
ADD B, A, 3.0
MULTIPLY C, B, B
ADD_REDUCE S, C, axis=None
DEL B
SYNC S
""")
    from fusionlab.backend.numba.codegen import get_kernel

    k = get_kernel(p, [1, 2, 3, 4], parallel=True)
    assert "for " not in k.source and "parallel=False" in k.source and k.contracted == ("B",)
    assert "B = A[0] + np.float64(c0)  # 2: ADD B, A, 3.0" in k.source and k.constants == (3.0,)   # typed as NumPy computes
    assert "S[0] = C[0]  # 4: ADD_REDUCE S, C, axis=None" in k.source   # the sum of one element
    out = Driver([plan(p, [[0], [1, 2, 3, 4], [5]], min_size=0)], Externals(), CACHE)()
    assert float(out["S"]) == 25.0 == float(run_reference(p)["S"])


@pytest.mark.parametrize("threads, chunks", [(1, 4), (2, 4), (2, 0), (None, 4), (None, 64)])
def test_thread_count_and_schedule_never_change_results(threads, chunks):
    # threads sized to the free cores, a dynamic (chunked) or static schedule: the kernels'
    # reductions keep one partial per loop iteration, so results are the same every way
    import numba

    cap = _capture("heat_equation")
    plans, inputs, externals = planned(cap, 0)
    want = Driver(plans, externals, CACHE, inputs, mode="blocks", threads=1, chunks_per_thread=0)()
    d = Driver(plans, externals, CACHE, inputs, mode="numba", threads=threads, chunks_per_thread=chunks)
    got = d()
    assert d.choice is not None and 1 <= d.choice.threads <= numba.config.NUMBA_NUM_THREADS
    if threads is not None:
        assert d.choice.threads == min(threads, numba.config.NUMBA_NUM_THREADS) and d.choice.reason == "asked for"
    assert (d.choice.chunksize == 0) == (d.choice.threads == 1 or chunks <= 1)
    assert sorted(got) == sorted(want)
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-12, atol=1e-12)


def test_arrays_named_like_the_drivers_own_names_get_other_names():
    # an array named k in two incarnations (two batches) once looped forever (k_1, k_2, ...
    # look like kernels); arrays named s0 or m0 would shadow a slot or a new array
    first = parse("""
ARRAY k float64[5000]
ARRAY s0 float64[5000]
ARRAY m0 float64[5000]
RANGE k
MULTIPLY s0, k, k
DEL k
ADD m0, s0, 1.0
SYNC m0
DEL s0
""")
    second = parse("ARRAY k float64[5000]\nRANGE k\nMULTIPLY k, k, 2.0\nSYNC k\n")
    plans = [plan(first, [[0], [1, 2], [3, 4], [5]], min_size=0), plan(second, [[0, 1, 2]], min_size=0)]
    src = get_driver(plans).source
    # the driver's variables are its own names (x0, x1, ...), whatever the arrays are called
    assert all(re.fullmatch(r"x\d+", v) for v in re.findall(r"^    (\w+) = ", src, re.M))
    assert "# k: " in src and "# s0: " in src and "# m0: " in src
    got = Driver(plans, Externals(), CACHE, mode="python")()
    want = {**run_reference(first), **run_reference(second)}
    assert sorted(got) == sorted(want)
    for name in want:
        np.testing.assert_array_equal(got[name], want[name])


def test_each_parallel_loop_gets_its_own_chunk():
    """The dynamic schedule's chunk follows each kernel's loop: a reduction of a few hundred
    chunks must not set the chunk of a million-element map (a chunk of 30 made it 15 times
    slower); the chunk is set again only when the loop changes."""
    p = parse("ARRAY A float64[1000000]\nARRAY T float64[1000000]\nARRAY S float64[]\nRANGE A\n"
              "MULTIPLY T, A, A\nSUM S, T, axis=None\nADD T, T, 1.0\nSYNC S\nSYNC T\n")
    plans = [plan(p, [[0], [1], [2], [3], [4, 5]], min_size=4096)]
    spec = get_driver(plans)
    loops = [k.parallel_iterations for _, k in spec.kernels]
    assert 1_000_000 in loops and min(loops) < 1000   # a map and a chunked reduction
    sets = re.findall(r"set_chunk\(max\(1, (\d+) // ch\)", spec.source)
    calls = re.findall(r"^    (k_\w+)\(", spec.source, re.M)
    by_name = {name: k.parallel_iterations for name, k in spec.kernels}
    want = [n for i, n in enumerate(by_name[c] for c in calls) if i == 0 or n != by_name[calls[i - 1]]]
    assert [int(x) for x in sets] == want
    assert spec.source.splitlines()[1].endswith(", ch):")
    d = Driver(plans, Externals(), CACHE, threads=2)
    got = d()
    assert d.choice is not None and d.choice.chunksize > 0
    a = np.arange(1_000_000, dtype=float)
    np.testing.assert_allclose(got["S"], np.sum(a * a), rtol=1e-12)
    np.testing.assert_allclose(got["T"], a * a + 1.0)


@pytest.mark.parametrize("mode", ["numba", "blocks"])
def test_a_compiled_driver_sets_each_loops_chunk_and_is_cached(mode, tmp_path):
    """Numba's own set_parallel_chunksize compiles to a call through a ctypes pointer, so a
    compiled driver that called it could not be cached on disk; it kept the run's one chunk,
    from its shortest loop, and handed a million-element map out in chunks of a reduction's
    size (the wave equation: 33,000 chunks a step). It now calls ``set_chunk`` (by symbol
    name, cacheable) before each loop, as the Python driver does; block by block does too."""
    import numba
    from numba.core.errors import NumbaWarning

    p = parse("ARRAY A float64[1000000]\nARRAY T float64[1000000]\nARRAY S float64[]\nRANGE A\n"
              "MULTIPLY T, A, A\nSUM S, T, axis=None\nADD T, T, 2.0\nSYNC S\nSYNC T\n")
    plans = [plan(p, [[0], [1], [2], [3], [4, 5]], min_size=4096)]
    cache = KernelCache(directory=tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error", NumbaWarning)   # "cannot cache": an error here
        d = Driver(plans, Externals(), cache, mode=mode, threads=2)
        got = d()
    loops = [k.parallel_iterations for _, k in get_driver(plans).kernels]
    assert min(loops) < 1000 and d.choice.chunksize == max(1, min(loops) // 8)   # the run's shortest loop
    # the last loop (ADD on a million elements) ran with its own chunk, not the run's
    assert numba.get_parallel_chunksize() == 1_000_000 // 8
    if mode == "numba":
        assert d.kind is Runs.COMPILED_DRIVER and "set_chunk(max(1, 1000000 // ch) if ch else 0)" in d.spec.source
        assert list(tmp_path.rglob(f"d_{d.spec.key}*.nbi")), "the compiled driver was not cached on disk"
    a = np.arange(1_000_000, dtype=float)
    np.testing.assert_allclose(got["S"], np.sum(a * a), rtol=1e-12)
    np.testing.assert_allclose(got["T"], a * a + 2.0)
