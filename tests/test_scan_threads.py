"""One-dimensional scans follow the thread count at run time (issue 13, shared machine): one
compiled kernel runs the serial one-pass scan when one thread runs it (NumPy's order of
combining: equal to NumPy's accumulate bit for bit) and the two-pass chunked scan with
several threads (reassociated at chunk boundaries: within the prefix-sum bound). A serial
kernel (``parallel=False``) has the one-pass form only."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import numba
import numpy as np
import pytest

from fusionlab import parse
from fusionlab.ir.bytecode import Opcode
from fusionlab.capture import capture
from fusionlab.backend.numba.codegen import get_kernel
from fusionlab.backend.numba.driver import Driver
from fusionlab.backend.numba.plan import KernelCache, plan, run_plan
from fusionlab.runtime.reference import Externals, Storage
from fusionlab.backend.numba.threads import thread_count

from agreement import CACHE
from kernels import planned
from numba_threads import threads

U = np.finfo(np.float64).eps / 2
N = 10000   # three chunks of 4096: the chunked form has carries to add
TWO = numba.config.NUMBA_NUM_THREADS >= 2

SCANS = [
    (Opcode.ADD_ACCUMULATE, "float64", np.add),
    (Opcode.ADD_ACCUMULATE, "float32", np.add),
    (Opcode.ADD_ACCUMULATE, "int64", np.add),
    (Opcode.ADD_ACCUMULATE, "int8", np.add),        # C wraps in int8 (NumPy accumulates in int64)
    (Opcode.ADD_ACCUMULATE, "uint8", np.add),
    (Opcode.MULTIPLY_ACCUMULATE, "int32", np.multiply),   # wraps around int32 after a few dozen factors
    (Opcode.MULTIPLY_ACCUMULATE, "float64", np.multiply),
    (Opcode.MAXIMUM_ACCUMULATE, "float32", np.maximum),
    (Opcode.MINIMUM_ACCUMULATE, "int16", np.minimum),
    (Opcode.LOGICAL_OR_ACCUMULATE, "bool", np.logical_or),
]
#: the feeding map and what reads the scan after it: C stored as the scan's output (its local
#: scan stored by the chunked form's pass 1), or contracted (pass 1 only totals)
PROGRAM = """
ARRAY X {t}[{n}]
ARRAY T {t}[{n}]
ARRAY C {t}[{n}]
ARRAY D {t}[{n}]
{feed}
{scan} C, T, axis=0
MAXIMUM D, C, C
DEL T
{keep}
SYNC D
"""




def _data(dtype: str, op: Opcode) -> np.ndarray:
    rng = np.random.default_rng(abs(hash((dtype, op.name))) % 1000)
    if dtype == "bool":
        return rng.random(N) < 0.9995
    if op is Opcode.MULTIPLY_ACCUMULATE:
        if dtype.startswith("int"):
            return rng.integers(-3, 4, N).astype(dtype) | 1   # odd factors: products wrap, never 0
        return 1 + (rng.random(N) - 0.5) * 1e-3
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(max(info.min, -100), min(info.max, 100), N).astype(dtype)
    return (rng.random(N) - 0.5).astype(dtype)


def _program(op: Opcode, dtype: str, stored: bool) -> object:
    feed = "LOGICAL_NOT T, X" if dtype == "bool" else "COPY T, X" if dtype.startswith("uint") else "NEGATIVE T, X"
    return parse(PROGRAM.format(t=dtype, n=N, feed=feed, scan=op.name, keep="SYNC C" if stored else "DEL C"))


def _fed(x: np.ndarray) -> np.ndarray:
    return np.logical_not(x) if x.dtype == bool else x.copy() if x.dtype.kind == "u" else -x


def _run(p: object, x: np.ndarray, cache: KernelCache) -> dict[str, np.ndarray]:
    block = list(range(len(p)))   # type: ignore[arg-type]
    return run_plan(plan(p, [block], min_size=0), Storage({"X": x.copy()}), Externals(), cache)


@pytest.mark.parametrize("stored", [True, False], ids=["stored", "contracted"])
@pytest.mark.parametrize("op,dtype,ufunc", SCANS, ids=[f"{o.name}-{d}" for o, d, _ in SCANS])
def test_one_kernel_scans_serially_on_one_thread_and_in_chunks_on_two(op, dtype, ufunc, stored):
    p = _program(op, dtype, stored)
    k = get_kernel(p, range(len(p)))
    assert "if thread_count() == 1:" in k.source and "pass 1" in k.source and "pass 2" in k.source
    x = _data(dtype, op)
    with np.errstate(over="ignore"):
        want = ufunc.accumulate(_fed(x)).astype(dtype)
    with threads(1):
        assert thread_count() == 1
        one = _run(p, x, CACHE)
    compiled = CACHE.kernels[k.key]
    # the serial form combines in NumPy's order: equal bit for bit (integers wrap alike)
    np.testing.assert_array_equal(one["D"], want)
    if stored:
        np.testing.assert_array_equal(one["C"], want)
    if not TWO:
        return
    with threads(2):
        two = _run(p, x, CACHE)
    assert CACHE.kernels[k.key] is compiled   # the same compiled kernel, not a second one
    if op is Opcode.ADD_ACCUMULATE and dtype.startswith("float"):
        t = _fed(x).astype(np.float64)
        eps = np.finfo(dtype).eps / 2
        bound = 2 * np.arange(1, N + 1) * eps * np.cumsum(np.abs(t))   # two summation orders (Higham 4.1)
        assert np.all(np.abs(two["D"].astype(np.float64) - want) <= bound)
    elif op is Opcode.MULTIPLY_ACCUMULATE and dtype.startswith("float"):
        k_ = np.arange(1, N + 1)
        np.testing.assert_array_less(np.abs(two["D"] - want), 2 * k_ * U * np.abs(want) + 1e-300)
    else:   # integer, min/max and logical scans are exact in any order (wrap-around is associative)
        np.testing.assert_array_equal(two["D"], want)


def test_the_one_thread_form_is_exact_where_the_chunked_form_reassociates():
    # float64 sums of 10000 values with cancellation: the carries added at chunk boundaries
    # change the last bits, the serial form does not (what makes the one-pass form NumPy's)
    p = _program(Opcode.ADD_ACCUMULATE, "float64", True)
    x = np.random.default_rng(7).random(N) - 0.5
    want = np.cumsum(-x)
    with threads(1):
        np.testing.assert_array_equal(_run(p, x, CACHE)["C"], want)
    if TWO:
        with threads(2):
            assert not np.array_equal(_run(p, x, CACHE)["C"], want)


def test_a_serial_scan_kernel_is_one_pass_only():
    p = _program(Opcode.ADD_ACCUMULATE, "float64", True)
    k = get_kernel(p, range(len(p)), parallel=False)
    assert "thread_count" not in k.source and "pass 1" not in k.source and "numba.prange" not in k.source
    # one pass over memory: strip by strip, the map's loop then the scan's over the same strip
    # (fusionlab.backend.numba.strip; NEGATIVE calls nothing: no libm loop)
    assert k.source.count("for acc_st in range(") == 1 and k.source.count("for i0 in range(acc_s0, acc_s1):") == 2
    x = np.random.default_rng(8).random(N) - 0.5
    arrays = {"X": x, "C": np.empty(N), "D": np.empty(N)}
    CACHE.get(k)(*[arrays[v.base.name] for v in k.arguments], *k.scalar_arguments)
    np.testing.assert_array_equal(arrays["C"], np.cumsum(-x))
    np.testing.assert_array_equal(arrays["D"], np.cumsum(-x))


def test_a_captured_cumsum_of_a_map_under_the_driver_follows_its_thread_count():
    src = ("import numpy as np\nx = np.random.default_rng(0).random(20000)\n"
           "c = np.cumsum(np.sin(x) * 2.0)\ny = c * 0.5 + 1.0\n")
    with contextlib.redirect_stdout(io.StringIO()):
        cap = capture(src, {})
    plans, inputs, externals = planned(cap, 4096)
    scans = [bp.kernel for p in plans for bp in p.blocks
             if bp.kernel is not None and "ADD_ACCUMULATE" in bp.kernel.source]
    assert len(scans) == 1 and "if thread_count() == 1:" in scans[0].source
    x = np.random.default_rng(0).random(20000)
    want_c = np.cumsum(np.sin(x) * 2.0)
    one = Driver(plans, externals, CACHE, inputs, mode="numba", threads=1)()
    assert one["c"].tolist() == want_c.tolist()   # exact: NumPy's order
    np.testing.assert_array_equal(one["y"], want_c * 0.5 + 1.0)
    if TWO:
        two = Driver(plans, externals, CACHE, inputs, mode="numba", threads=2)()
        bound = 2 * np.arange(1, 20001) * U * np.cumsum(np.abs(np.sin(x) * 2.0))
        assert np.all(np.abs(two["c"] - want_c) <= bound)


FRESH = """
import sys
import numba, numpy as np
from pathlib import Path
from fusionlab import parse
from fusionlab.backend.numba.plan import KernelCache, plan, run_plan
from fusionlab.runtime.reference import Externals, Storage
p = parse("ARRAY X float64[10000]\\nARRAY T float64[10000]\\nARRAY C float64[10000]\\n"
          "SIN T, X\\nADD_ACCUMULATE C, T, axis=0\\nDEL T\\nSYNC C")
cache = KernelCache(directory=Path(sys.argv[1]))
x = np.random.default_rng(0).random(10000)
want = np.cumsum(np.sin(x))
for t in (1, numba.config.NUMBA_NUM_THREADS):
    numba.set_num_threads(t)
    got = run_plan(plan(p, [list(range(len(p)))], min_size=0), Storage({"X": x}), Externals(), cache)["C"]
    assert np.all(np.abs(got - want) <= 2 * np.arange(1, 10001) * 2.0**-53 * np.cumsum(np.sin(x))), t
    print(t, bool(np.array_equal(got, want)))
(k,) = cache.kernels.values()
print("disk hits", sum(k.stats.cache_hits.values()))
"""


def test_a_scan_kernel_from_a_warm_disk_cache_calls_thread_count_in_a_fresh_process(tmp_path):
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": str(root) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    runs = [subprocess.run([sys.executable, "-c", FRESH, str(tmp_path)], capture_output=True, text=True, env=env,
                           cwd=root, timeout=300) for _ in range(2)]
    for r in runs:
        assert r.returncode == 0, r.stderr[-2000:]
        assert "1 True" in r.stdout   # one thread: NumPy's order, exact
    assert "disk hits 0" in runs[0].stdout and "disk hits 1" in runs[1].stdout
