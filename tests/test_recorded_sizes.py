"""Sizes capture records from the data never let a kernel write or read out of bounds (issue 31).

A capture is a trace of one NumPy run: a filter's output holds the count NumPy's mask
selected, a gather's indices were inside their source. A fused kernel rounds some values
otherwise (complex64 ``abs``: NumPy calls ``hypotf``), and a value within a unit of a
threshold may land on its other side. Each such size is checked where it is written or read;
a mismatch makes the run's driver do the whole run again as NumPy
(:mod:`fusionlab.backend.numba.guards`), and the run says so (``RunResult.fallback``).
"""

from __future__ import annotations

import subprocess
import sys

import numba
import numpy as np
import pytest

from fusionlab import parse
from fusionlab.capture import capture
from fusionlab.backend.numba.codegen import KernelSource
from fusionlab.backend.numba.guards import FilterCountMismatch, MismatchKind, RecordedSizeMismatch
from fusionlab.backend.numba.plan import KernelCache
from fusionlab.pipeline.runner import run

from kernels import CHECKED

DRIVERS = ["python", "numba", "blocks"]

#: a complex64 value whose magnitude NumPy (hypotf) puts below the threshold and a plain
#: sqrt(re^2 + im^2) in float32 above it (measured: see _fused_abs_crosses)
ZVALUE = "np.complex64(complex(np.float32(1.1669002), np.float32(1.7920876)))"
RADIUS = "np.float32(2.138512)"

FILTER = f"""
import numpy as np
Z = np.full(100000, {ZVALUE})
I = abs(Z) > {RADIUS}   # NumPy selects nothing
S = Z[I]
n = len(S)
"""

GATHER = f"""
import numpy as np
Z = np.full(100000, {ZVALUE})
src = np.arange(100000, dtype=np.float64)
k = (abs(Z) > {RADIUS}) * 100000   # NumPy: index 0 everywhere
g = src[k]
t = float(g.sum())
"""

SCATTER = f"""
import numpy as np
Z = np.full(100000, {ZVALUE})
N = np.zeros(100000, dtype=np.int32)
k = (abs(Z) > {RADIUS}) * 100000
N[k] = 5
t = int(N.sum())
"""

PROGRAMS = {"filter": (FILTER, MismatchKind.FILTER_COUNT), "gather": (GATHER, MismatchKind.INDEX_RANGE),
            "scatter": (SCATTER, MismatchKind.NUMPY_CALL)}


def _fused_abs_crosses() -> bool:
    """Whether a kernel's complex64 ``abs`` of ZVALUE is past RADIUS where NumPy's is not."""
    z = np.full(4, np.complex64(complex(np.float32(1.1669002), np.float32(1.7920876))))

    @numba.njit
    def mags(a):  # type: ignore[no-untyped-def]
        return np.abs(a)

    return bool(mags(z)[0] > np.float32(2.138512)) and not bool(np.abs(z)[0] > np.float32(2.138512))


def _plain(source: str) -> dict:
    ns: dict = {}
    exec(source, ns)
    return ns


@pytest.mark.parametrize("driver", DRIVERS)
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_a_threshold_the_fused_rounding_crosses_runs_as_numpy(name: str, driver: str):
    source, kind = PROGRAMS[name]
    r = run(capture(source, {}), "greedy", check=True, driver=driver, cache=CHECKED)
    assert r.check is not None and r.check.ok, r.check
    want = _plain(source)
    compared = [key for key in ("g", "N", "S", "I", "k") if key in want and key in r.values]
    assert compared   # the arrays the program keeps: NumPy's values, element for element
    for key in compared:
        np.testing.assert_array_equal(np.asarray(r.values[key]), np.asarray(want[key]))
    if _fused_abs_crosses():
        assert r.fallback is not None and r.fallback.kind is kind, r.driver
        assert r.kernels == 0 and r.fallbacks == [f"every block: {r.fallback.describe()}"]
    else:   # a Numba whose abs rounds as NumPy's: nothing crosses, the kernels' values stand
        assert r.fallback is None


COMPRESS = """ARRAY X float64[8]
ARRAY M bool[8]
ARRAY Y float64[3]
ARRAY S float64[]
COMPRESS Y, X, M
ADD_REDUCE S, Y, axis=None
SYNC Y
SYNC S
"""


@pytest.mark.parametrize("driver", DRIVERS)
@pytest.mark.parametrize("selected", [0, 2, 5, 8])
def test_a_mask_of_another_count_never_writes_past_the_output(selected: int, driver: str):
    # the program records 3 selected elements; run on masks selecting others: the kernel
    # writes none past Y, and NumPy's redo raises the reference executor's error naming both counts
    p = parse(COMPRESS)
    x = np.arange(8.0) + 1
    mask = np.zeros(8, bool)
    mask[:selected] = True
    with pytest.raises(ValueError, match=rf"the mask selects {selected} elements but the output Y holds 3"):
        run(p, "greedy", inputs={"X": x, "M": mask}, driver=driver, cache=CHECKED, min_size=0)
    mask[:] = False
    mask[[1, 4, 6]] = True
    r = run(p, "greedy", inputs={"X": x, "M": mask}, driver=driver, cache=CHECKED, min_size=0)
    assert r.fallback is None and list(r.values["Y"]) == [2.0, 5.0, 7.0] and float(r.values["S"]) == 14.0


@pytest.mark.parametrize("parallel_from", [0, 1 << 30])
def test_the_kernel_itself_raises_before_its_output_is_overrun(parallel_from: int):
    from fusionlab.backend.numba.plan import plan, run_plan
    from fusionlab.runtime.reference import Externals, Storage

    p = parse(COMPRESS)
    pl = plan(p, [list(range(len(p)))], min_size=parallel_from)
    (block,) = [b for b in pl.blocks if b.kernel is not None]
    mask = np.ones(8, bool)
    storage = Storage({"X": np.arange(8.0), "M": mask})
    with pytest.raises(FilterCountMismatch) as got:
        run_plan(pl, storage, Externals(), CHECKED)
    assert isinstance(got.value, RecordedSizeMismatch) and got.value.instruction == 0
    assert block.kernel is not None and "raise FilterCountMismatch(0)" in block.kernel.source


def test_the_bounds_checked_mode_turns_an_out_of_bounds_write_into_an_index_error(tmp_path):
    # a parallel kernel that writes one past its array: Numba checks no index inside a prange,
    # so the checked mode compiles it serially with boundscheck (it would corrupt memory otherwise)
    source = ("@numba.njit(parallel=True, error_model='numpy', cache=True)\ndef kernel(a0, n0):\n"
              "    for i0 in numba.prange(n0):\n        a0[i0 + 1] = 1.0\n")
    spec = KernelSource(source, (), (), (), (), "test: one past the end " + str(tmp_path))
    fn = KernelCache(directory=tmp_path, bounds_checked=True).get(spec)
    a = np.zeros(64)
    with pytest.raises(IndexError):
        fn(a, np.uint64(64))
    fn(a, np.uint64(63))   # in bounds: runs
    assert a[1:].all() and a[0] == 0.0
    assert sorted(f.name for f in tmp_path.glob("*.py")) == [f"kb_{spec.key}.py"]


def test_the_cli_exits_cleanly_where_the_filter_used_to_overrun(tmp_path):
    path = tmp_path / "four.py"
    path.write_text(FILTER)
    for driver in ("python", "numba"):
        done = subprocess.run([sys.executable, "-m", "fusionlab", "run", str(path), "--check", "--driver", driver],
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-2000:]
        assert "0 differ" in done.stdout, done.stdout
        if _fused_abs_crosses():   # one line says the run was NumPy's and why, once
            assert done.stdout.count("done again as NumPy") == 1, done.stdout
            assert "every block ran as NumPy" in done.stdout and "(a filter's count)" in done.stdout


def test_a_fuse_cell_compiles_and_times_a_crossed_threshold_as_numpy():
    # the student's kernel survives Compile & time, and the row says the run was NumPy's
    from IPython.testing.globalipapp import get_ipython
    from IPython.utils.capture import capture_output

    ip = get_ipython()
    ip.run_line_magic("load_ext", "fusionlab")
    with capture_output():
        ip.run_cell_magic("fuse", "--no-explorer --compare bohrium", FILTER)
    assert ip.user_ns["n"] == 0   # the cell's own values: plain NumPy's
    records = ip.user_ns["_fuse"].time(repeat=1)
    assert [r.cost_model for r in records] == ["numpy", "bohrium"]
    (fused,) = records[1:]
    assert not fused.not_timed and fused.max_abs_error in (None, 0.0)
    if _fused_abs_crosses():
        assert fused.kernels == 0 and fused.fallbacks and "done again as NumPy" in fused.fallbacks[0]


def test_the_error_model_covers_numpys_vectorised_and_scalar_complex_squares():
    # 30 steps of z -> z*z + c in complex64: NumPy's SIMD loop and its one-at-a-time scalar
    # products differ (fused multiply-adds), and chaos amplifies that; the error model's
    # bound for every bounded point must hold both (issue 31: a correct run is no mismatch)
    from fusionlab.runtime.errors import propagate
    from fusionlab.pipeline import target_parts

    source = """
import numpy as np
rng = np.random.default_rng(1)
c = (rng.uniform(-2.0, 0.5, 3000) + 1j * rng.uniform(-1.2, 1.2, 3000)).astype(np.complex64)
z = np.zeros_like(c)
for k in range(30):
    np.multiply(z, z, z)
    np.add(z, c, z)
m = np.abs(z)
"""
    cap = capture(source, {})
    batches, inputs, externals = target_parts(cap)
    with np.errstate(all="ignore"):
        values, bounds = propagate(batches, externals, inputs)
        vec, bound, mbound = cap.values_from(values)["z"], cap.values_from(bounds)["z"], cap.values_from(bounds)["m"]
        c = _plain(source)["c"]
        one = np.empty_like(c)
        for i, ci in enumerate(c):   # one at a time: NumPy's scalar complex64 math
            z = np.complex64(0)
            for _ in range(30):
                z = z * z + ci
            one[i] = z
        finite = np.isfinite(vec) & np.isfinite(one)
        assert finite.sum() > 500   # the points that stay bounded (and those escaping slowly)
        differ = np.abs(vec.astype(complex) - one.astype(complex))
        assert (differ[finite] > 0).any()   # the two loops do differ
        assert (differ[finite] <= bound[finite]).all()
        mags = np.array([abs(x) for x in one])
        assert (np.abs(mags - np.abs(vec))[finite] <= mbound[finite]).all()
