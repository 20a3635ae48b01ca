"""Measure this machine for the ``time`` cost model: ``fusionlab calibrate``.

:func:`calibrate` times small Numba kernels, each built like the kernels of
:mod:`fusionlab.backend.numba.codegen` (a ``prange`` loop, or the same loop serial):

- **bandwidth** of reads (a vectorised sum) and writes (a fill), parallel and serial, over
  arrays of 256 KiB to 256 MiB (:data:`CURVE_SIZES`): the curve the time model interpolates
  at a program's working set; its points near the last-level cache and at 256 MiB give the
  two-level ``cache`` and ``memory`` figures;
- **launch**: a call from Python of a parallel and of a serial kernel doing one element;
- **block by block** (a run with an opaque call or a contraction has no driver): a block's
  Python bookkeeping, and a lone instruction NumPy runs from the executor;
- **allocation**: a fresh ``np.empty`` written once, against the same write into memory
  used before (the difference is the page faults of new memory, per byte), and a small
  ``np.empty`` (the fixed part);
- **operations**: the throughput of each opcode family (``exp``, ``log``, ``sqrt``,
  division, multiply/add, comparisons, ``where``, reductions) on float64, float32 and int64,
  from chains of the operation on data in the core's own cache, so the loads do not count;
- **contractions**: seconds per floating-point operation of a matrix product by BLAS
  (``np.matmul``) and by ``np.einsum``'s own loops, float64 and float32.

The figures go, with the CPU model, core count and load, to a JSON file per machine
(:func:`fusionlab.costs.timemodel.machine_path`). A busy machine — a load average above
``max_load`` per core, or repeated measurements spreading more than ``max_spread`` — makes
the figures *noisy*: they are stored with ``"noisy": true`` and the reasons, and the
command line exits with status 1 unless ``--force``.

The kernels live in this file (not generated) so that Numba's disk cache keeps them: only
the first calibration on a machine pays their compilation (about 20 s).
"""

from __future__ import annotations

import math
import os
import platform
import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numba
import numpy as np

from fusionlab.backend.numba.intrinsics import kernel_exp, kernel_log
from fusionlab.costs.timemodel import (
    DTYPES, FAMILIES, MachineFigures, cpu_model, last_level_cache_bytes, machine_path,
)

__all__ = ["calibrate", "CalibrationOptions", "Calibration", "read_load", "format_figures", "CURVE_SIZES"]

_REPS = 8   # operations chained per element in the throughput kernels

# --------------------------------------------------------------------------- kernels
# Each kernel is written twice, parallel and serial: Numba's cache index does not tell
# two dispatchers of one Python function apart by their flags.


@numba.njit(parallel=True, cache=True, fastmath={"reassoc"})
def _read_par(a: np.ndarray) -> float:
    s = a[0] * 0
    for i in numba.prange(a.size):
        s += a[i]
    return s


@numba.njit(cache=True, fastmath={"reassoc"})
def _read_ser(a: np.ndarray) -> float:
    s = a[0] * 0
    for i in range(a.size):
        s += a[i]
    return s


@numba.njit(parallel=True, cache=True)
def _write_par(a: np.ndarray, v: float) -> None:
    for i in numba.prange(a.size):
        a[i] = v


@numba.njit(cache=True)
def _write_ser(a: np.ndarray, v: float) -> None:
    for i in range(a.size):
        a[i] = v


@numba.njit(parallel=True, cache=True)
def _one_par(a: np.ndarray) -> None:
    for i in numba.prange(a.size):
        a[i] += 1


@numba.njit(cache=True)
def _one_ser(a: np.ndarray) -> None:
    for i in range(a.size):
        a[i] += 1


_CHAIN_FAMILIES = ("muladd", "exp", "log", "sqrt", "division", "int_division", "comparison", "where")
# the helper operations each kernel adds to its family's own (muladd operations): the
# offset added to x and the accumulation; ``where``'s comparison is its own
_HELPERS = {"muladd": 0, "exp": 2, "log": 2, "sqrt": 2, "division": 2, "int_division": 2,
            "comparison": 2, "where": 1}


# Eight near-identical loops, one per family, chosen outside the loops (a branch inside
# would stop vectorisation), constants of the array's own type. Arithmetic is a chain of
# ``_REPS`` multiply-adds per element; every other family applies its operation ``_REPS``
# times to *independent* operands (``x + c[6 + r]``) and sums them, as a fused map does: a
# chain of dependent divisions or comparisons measured their latency, 2 to 5 times the
# throughput a map sees (division 0.95 against 0.5 ns per element, comparisons 0.9 against
# 0.19 ns, serial, on the Xeon virtual machines).


@numba.njit(parallel=True, cache=True, error_model="numpy")   # as the kernels codegen writes
def _chain_par(a: np.ndarray, out: np.ndarray, c: np.ndarray, family: int) -> None:
    n = a.size
    if family == 0:
        for i in numba.prange(n):
            x = a[i]
            for r in range(_REPS):
                x = x * c[0] + c[1]
            out[i] = x
    elif family == 1:
        for i in numba.prange(n):
            x = a[i]
            s = x * 0
            for r in range(_REPS):
                s += kernel_exp(x + c[6 + r])   # as the kernels compute it (float64: vmath)
            out[i] = s
    elif family == 2:
        for i in numba.prange(n):
            x = a[i]
            s = x * 0
            for r in range(_REPS):
                s += kernel_log(x + c[6 + r])
            out[i] = s
    elif family == 3:
        for i in numba.prange(n):
            x = a[i]
            s = x * 0
            for r in range(_REPS):
                s += np.sqrt(x + c[6 + r])
            out[i] = s
    elif family == 4:
        for i in numba.prange(n):
            x = a[i]
            s = x * 0
            for r in range(_REPS):
                s += c[3] / (x + c[6 + r])
            out[i] = s
    elif family == 5:
        for i in numba.prange(n):
            x = a[i]
            s = x * 0
            for r in range(_REPS):
                s += (x + c[6 + r]) // c[2]
            out[i] = s
    elif family == 6:
        for i in numba.prange(n):
            x = a[i]
            s = x * 0
            for r in range(_REPS):
                s += (x + c[6 + r]) > c[5]
            out[i] = s
    elif family == 7:
        for i in numba.prange(n):
            x = a[i]
            s = x * 0
            for r in range(_REPS):
                s += x if x > c[6 + r] else c[0]
            out[i] = s


@numba.njit(cache=True, error_model="numpy")
def _chain_ser(a: np.ndarray, out: np.ndarray, c: np.ndarray, family: int) -> None:
    n = a.size
    if family == 0:
        for i in range(n):
            x = a[i]
            for r in range(_REPS):
                x = x * c[0] + c[1]
            out[i] = x
    elif family == 1:
        for i in range(n):
            x = a[i]
            s = x * 0
            for r in range(_REPS):
                s += kernel_exp(x + c[6 + r])   # as the kernels compute it (float64: vmath)
            out[i] = s
    elif family == 2:
        for i in range(n):
            x = a[i]
            s = x * 0
            for r in range(_REPS):
                s += kernel_log(x + c[6 + r])
            out[i] = s
    elif family == 3:
        for i in range(n):
            x = a[i]
            s = x * 0
            for r in range(_REPS):
                s += np.sqrt(x + c[6 + r])
            out[i] = s
    elif family == 4:
        for i in range(n):
            x = a[i]
            s = x * 0
            for r in range(_REPS):
                s += c[3] / (x + c[6 + r])
            out[i] = s
    elif family == 5:
        for i in range(n):
            x = a[i]
            s = x * 0
            for r in range(_REPS):
                s += (x + c[6 + r]) // c[2]
            out[i] = s
    elif family == 6:
        for i in range(n):
            x = a[i]
            s = x * 0
            for r in range(_REPS):
                s += (x + c[6 + r]) > c[5]
            out[i] = s
    elif family == 7:
        for i in range(n):
            x = a[i]
            s = x * 0
            for r in range(_REPS):
                s += x if x > c[6 + r] else c[0]
            out[i] = s


# families each dtype measures (transcendental functions and true division of integers
# run in float64 after a conversion: they take float64's figures)
_MEASURED: dict[str, tuple[str, ...]] = {
    "float64": ("muladd", "exp", "log", "sqrt", "division", "comparison", "where"),
    "float32": ("muladd", "exp", "log", "sqrt", "division", "comparison", "where"),
    "int64": ("muladd", "int_division", "comparison", "where"),
}

# --------------------------------------------------------------------------- measuring


@dataclass(frozen=True)
class CalibrationOptions:
    """How hard to measure, and what counts as a busy machine.

    ``quick`` uses smaller arrays and fewer rounds (seconds, for tests); ``rounds`` is how
    many times each figure is measured (its median is kept, its spread judged).
    ``max_load`` is the one-minute load average per core above which the machine is busy;
    ``max_spread`` the largest tolerated spread, ``median / fastest - 1`` over the rounds of a
    figure (the median over all figures is judged).
    """

    quick: bool = False
    rounds: int = 21
    max_load: float = 0.5
    max_spread: float = 0.25

    @property
    def n_rounds(self) -> int:
        return max(9, self.rounds // 2) if self.quick else self.rounds


@dataclass
class Calibration:
    """A calibration's figures and whether they can be trusted."""

    figures: MachineFigures
    path: Path | None

    @property
    def noisy(self) -> bool:
        return self.figures.noisy


def read_load() -> float:
    """The one-minute load average (runnable processes), 0.0 where the OS has none.

    >>> read_load() >= 0.0
    True
    """
    try:
        return float(os.getloadavg()[0])
    except (OSError, AttributeError):
        return 0.0


def _timed(fn: Callable[[], Any], inner: int, rounds: int) -> list[float]:
    """Seconds per call of ``fn``, once per round (each round ``inner`` calls)."""
    fn()   # warm-up (compiles, faults the pages in)
    out = []
    for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(inner):
            fn()
        out.append((time.perf_counter() - t) / inner)
    return out


def _spread(xs: Sequence[float]) -> float:
    """How much slower the typical round was than the fastest: ``median / min - 1``."""
    low = min(xs)
    return statistics.median(xs) / low - 1 if low > 0 else 0.0


class _Meter:
    """Collects the medians and the spreads of the measurements."""

    def __init__(self, rounds: int) -> None:
        self.rounds = rounds
        self.spreads: dict[str, float] = {}

    def seconds(self, label: str, fn: Callable[[], Any], inner: int = 1) -> float:
        xs = _timed(fn, inner, self.rounds)
        self.spreads[label] = _spread(xs)
        # other load only ever adds time (a parallel kernel waits for a core another
        # process holds: a whole time slice), so the fastest round is the machine's speed
        return min(xs)


def _bandwidth(curve: dict[str, dict[str, list[list[float]]]], llc: int) -> dict[str, dict[str, dict[str, float]]]:
    """The two-level figures from the curve: ``cache`` at the working set nearest a quarter
    of the last-level cache (at most 16 MiB: a shared cache of hundreds of MiB on a virtual
    machine is mostly other tenants'), ``memory`` at the largest."""
    want = min(max(llc // 4, 1 << 20), 16 << 20)
    out: dict[str, dict[str, dict[str, float]]] = {"cache": {"read": {}, "write": {}},
                                                   "memory": {"read": {}, "write": {}}}
    for kind, modes in curve.items():
        for mode, points in modes.items():
            near = min(points, key=lambda p: abs(math.log(p[0] / want)))
            out["cache"][kind][mode] = near[1]
            out["memory"][kind][mode] = max(points)[1]
    return out


@numba.njit(cache=True)
def _nine_ser(a: np.ndarray, b: np.ndarray, c: np.ndarray, d: np.ndarray, e: np.ndarray, f: np.ndarray,
              g: np.ndarray, h: np.ndarray, k: np.ndarray) -> None:
    for i in range(a.size):
        a[i] += b[i] + c[i] + d[i] + e[i] + f[i] + g[i] + h[i] + k[i]


def _launch(meter: _Meter, quick: bool) -> dict[str, float]:
    """A kernel call from Python; per argument, the view the driver slices and Numba's
    dispatcher types (nine arguments against one). Calls are timed one by one and the
    fastest kept: a call is microseconds, a time slice lost to another process is
    milliseconds."""
    one = np.zeros(16)
    calls = 100 if quick else 400

    def fastest(label: str, fn: Callable[[], Any]) -> float:
        times = sorted(_timed(fn, 1, calls))
        meter.spreads[label] = _spread(times)
        return statistics.median(times[:3])

    serial = fastest("launch serial", lambda: _one_ser(one[0:1]))
    nine = fastest("launch serial, nine arguments", lambda: _nine_ser(*(one[k:k + 1] for k in range(9))))
    return {"parallel": fastest("launch parallel", lambda: _one_par(one[0:1])),
            "serial": serial, "argument": max(nine - serial, 0.0) / 8}


def _run_overhead(launch: dict[str, float], allocation: dict[str, float], quick: bool) -> float:
    """The fixed cost of one run of a partition (:func:`fusionlab.pipeline.run`'s driver:
    thread settings, memory slots, the call, the results), beyond its kernels: a run of one
    serial kernel on 16 elements, less that kernel's launch and its result's allocation.

    The median run, not the fastest: the model predicts the median a user is shown (the
    explorer's timings and the benchmarks report medians), and a run's fixed cost is spread
    (memory slots, the results handed over) in a way a kernel call is not."""
    from fusionlab.pipeline.runner import run
    from fusionlab.ir.text import parse

    program = parse("ARRAY B float64[16]\nCOPY B, 1\nADD B, B, 2\nSYNC B\n")
    times = run(program, partitions={0: [[0, 1, 2]]}, repeat=100 if quick else 400).times
    return max(statistics.median(times) - launch["serial"] - launch["argument"] - allocation["fixed"], 0.0)


def _batch_overhead(launch: dict[str, float], quick: bool) -> float:
    """What each batch of a run adds beyond its kernels: the driver's step from one batch
    to the next (the batch's memory slots, the values it hands to Python and takes back).
    A cell captured as nine batches against one (each ends where Python reads a value),
    the median runs' difference per batch, less the extra kernels' launches."""
    from fusionlab.capture import capture
    from fusionlab.backend.numba.plan import KernelCache
    from fusionlab.pipeline.runner import run

    cache = KernelCache()
    repeat = 100 if quick else 300

    def median_run(batches: int) -> tuple[float, int]:
        step = "x = x * 0.5 + 1.0\ns = float(x[1])\n"
        cap = capture("import numpy as np\nx = np.arange(16.0)\n" + step * (batches - 1) + "x = x * 0.5 + 1.0\n", {})
        r = run(cap, "greedy", cache=cache, repeat=repeat, min_size=1 << 30)
        return statistics.median(r.times), r.kernels

    (t1, k1), (t9, k9) = median_run(1), median_run(9)
    per_kernel = launch["serial"] + 2 * launch["argument"]
    return max((t9 - t1 - (k9 - k1) * per_kernel) / 8, 0.0)


def _block_by_block(launch: dict[str, float], quick: bool) -> dict[str, float]:
    """What a run without a driver (block by block, :func:`fusionlab.backend.numba.plan.run_plan`)
    adds: per block its Python bookkeeping (``block``: 32 kernel blocks against 16, block
    by block less the same through the Python driver), and per instruction NumPy runs
    from the executor (``numpy``: 32 lone instructions below ``min_size`` against 16)."""
    from fusionlab.backend.numba.plan import KernelCache
    from fusionlab.pipeline.runner import run
    from fusionlab.ir.text import parse

    cache = KernelCache()
    repeat = 100 if quick else 300

    def fastest(n: int, driver: str, min_size: int) -> float:
        lines = ["ARRAY A float64[16]", "ARRAY B float64[16]", "RANGE A"]
        lines += [f"ADD B, A, {k}" if k % 2 == 0 else "MULTIPLY A, B, 0.5" for k in range(n)]
        p = parse("\n".join(lines + ["SYNC A", "SYNC B"]))
        times = sorted(run(p, partitions={0: [[i] for i in range(len(p))]}, cache=cache, repeat=repeat,
                           driver=driver, min_size=min_size).times)
        return statistics.median(times[:max(3, len(times) // 10)])

    per_kernel = (fastest(32, "blocks", 0) - fastest(16, "blocks", 0)) / 16
    per_driven = (fastest(32, "python", 0) - fastest(16, "python", 0)) / 16
    per_numpy = (fastest(32, "blocks", 1 << 30) - fastest(16, "blocks", 1 << 30)) / 16
    return {"block": max(per_kernel - per_driven, 0.0), "numpy": max(per_numpy, launch["serial"])}


def _allocation(meter: _Meter, llc: int, quick: bool) -> dict[str, float]:
    n = min((2 if quick else 4) * llc, 256 << 20) // 8   # a 480 MiB cache: not 2 GB of page faults
    used = np.empty(n)
    _write_par(used, 1.0)
    fresh = meter.seconds("allocation fresh", lambda: _write_par(np.empty(n), 1.0))
    reused = meter.seconds("allocation reused", lambda: _write_par(used, 1.0))
    fixed = meter.seconds("allocation fixed", lambda: np.empty(16), 50 if quick else 200)
    return {"fixed": fixed, "per_byte": max(fresh - reused, 0.0) / (8 * n)}


#: working sets of the bandwidth curve, in bytes: the private caches, the shared cache and
#: memory of a few machines (a 2 MiB L2 and a 480 MiB L3 that holds 30 GB/s up to about
#: 32 MiB on the Xeon virtual machines; a 32 MiB L3 on the EPYC ones)
CURVE_SIZES: tuple[int, ...] = (256 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20, 256 << 20)


def _curve(meter: _Meter, launch: dict[str, float], quick: bool) -> dict[str, dict[str, list[list[float]]]]:
    """Read and write bandwidth over arrays of each of :data:`CURVE_SIZES` bytes (the
    largest left out when ``quick``), a kernel's launch taken off each call: what the time
    model interpolates at a program's working set."""
    out: dict[str, dict[str, list[list[float]]]] = {"read": {"parallel": [], "serial": []},
                                                    "write": {"parallel": [], "serial": []}}
    for nbytes in CURVE_SIZES[:-1] if quick else CURVE_SIZES:
        a = np.ones(nbytes // 8)
        inner = max(1, (8 << 20) // nbytes)   # rounds of about a millisecond, at least one call
        for mode, read, write in (("parallel", _read_par, _write_par), ("serial", _read_ser, _write_ser)):
            for kind, fn in (("read", lambda: read(a)), ("write", lambda: write(a, 1.0))):
                t = meter.seconds(f"{kind} {nbytes >> 10} KiB {mode}", fn, inner)
                t = max(t - launch[mode], t / 2)
                out[kind][mode].append([float(nbytes), nbytes / t])
    # a larger working set is never faster: a point below a larger one's figure was slowed
    # by other load (which only ever adds time), so it takes the larger one's
    for modes in out.values():
        for points in modes.values():
            for k in range(len(points) - 2, -1, -1):
                points[k][1] = max(points[k][1], points[k + 1][1])
    return out


def _flops(meter: _Meter, quick: bool) -> dict[str, dict[str, float]]:
    """Seconds per floating-point operation of a contraction (``2 n^3`` for a product of
    ``n x n`` matrices): ``gemm`` through BLAS (``np.matmul``), ``einsum`` by ``np.einsum``'s
    own loops (no ``optimize``: what the executor runs), per float type."""
    n = 96 if quick else 192
    out: dict[str, dict[str, float]] = {"gemm": {}, "einsum": {}}
    for dtype in ("float64", "float32"):
        a = np.random.default_rng(0).random((n, n)).astype(dtype)
        b = a.T.copy()
        flop = 2.0 * n ** 3
        out["gemm"][dtype] = meter.seconds(f"gemm {dtype}", lambda: np.matmul(a, b), 2) / flop
        out["einsum"][dtype] = meter.seconds(f"einsum {dtype}", lambda: np.einsum("ij,jk->ik", a, b), 1) / flop
    out["gemm"]["int64"] = out["einsum"]["int64"] = out["einsum"]["float64"]   # integers: no BLAS
    return out


def _operations(meter: _Meter, quick: bool) -> dict[str, dict[str, dict[str, float]]]:
    # data in the cores' own caches: the chains measure the arithmetic, not the loads
    n = 1 << (14 if quick else 16)
    out: dict[str, dict[str, dict[str, float]]] = {f: {} for f in FAMILIES}
    for dtype, families in _MEASURED.items():
        t = np.dtype(dtype).type
        # c[0..5]: multiply-add constants, divisor, numerator, threshold; c[6:]: the offsets
        consts = np.array([0.5, 1, 2, 1, 3, 0] + [r + 1 for r in range(_REPS)], dtype=dtype) if dtype == "int64" \
            else np.array([0.999, 0.001, 2.0, 1.0, 3.0, 0.5] + [1 + 0.1 * r for r in range(_REPS)], dtype=dtype)
        a = (np.arange(n) % 7).astype(dtype) if dtype == "int64" else np.full(n, t(0.5))
        o = np.empty_like(a)
        for mode, chain in (("parallel", _chain_par), ("serial", _chain_ser)):
            per_op: dict[str, float] = {}
            for name in families:
                k = _CHAIN_FAMILIES.index(name)
                s = meter.seconds(f"{name} {dtype} {mode}", lambda: chain(a, o, consts, k), 1 if quick else 4)
                per_op[name] = s / (n * _REPS)
            arith = per_op["muladd"] / 2   # a multiply and an add per step
            for name, s in per_op.items():
                own = arith if name == "muladd" else max(s - _HELPERS[name] * arith, 0.0)
                family = {"muladd": "arithmetic", "int_division": "division"}.get(name, name)
                out[family].setdefault(dtype, {})[mode] = max(own, 1e-13)
        # a reduction: one accumulation per element, from the same cached data
        for mode, read in (("parallel", _read_par), ("serial", _read_ser)):
            s = meter.seconds(f"reduction {dtype} {mode}", lambda: read(a), 1 if quick else 4)
            out["reduction"].setdefault(dtype, {})[mode] = max(s / n, 1e-13)
    return out


def _parallel_slower(bandwidth: dict[str, Any], ops: dict[str, Any], factor: float = 1.5) -> list[str]:
    """Figures whose parallel kernel took ``factor`` times the serial one's time. With two
    threads on an idle machine a parallel kernel on these sizes is never much slower (it
    waited for a core another process held), so the serial figure — a parallel kernel can
    always do as well — replaces it, in place; returns their names."""
    out = []
    for where, kinds in bandwidth.items():
        for kind, m in kinds.items():
            if m["parallel"] * factor < m["serial"]:
                out.append(f"{where} {kind}")
                m["parallel"] = m["serial"]
    for fam, dtypes in ops.items():
        for dt, m in dtypes.items():
            if m["parallel"] > factor * m["serial"]:
                out.append(f"{fam} {dt}")
                m["parallel"] = m["serial"]
    return out


def calibrate(
    options: CalibrationOptions = CalibrationOptions(),
    path: Path | None = None,
    load: Callable[[], float] | None = None,
    store: bool = True,
) -> Calibration:
    """Measure this machine and store the figures (see the module notes).

    ``load`` reads the one-minute load average (:func:`read_load` by default; a function,
    so a test can inject a busy reading). The figures are noisy when the load before or after measuring exceeds
    ``options.max_load`` per core, or when repeated measurements spread more than
    ``options.max_spread`` (median over all figures); they are stored either way, with the
    flag and the reasons, unless ``store=False``. ``path`` defaults to
    :func:`fusionlab.costs.timemodel.machine_path`.

    Examples
    --------
    A quick calibration takes seconds (``tests/test_calibrate.py`` runs them); here, only
    the options and the busy-machine rule:

    >>> opts = CalibrationOptions(quick=True)
    >>> opts.n_rounds, opts.max_load * 2    # busy above a load of 1.0 on two cores
    (10, 1.0)
    """
    load = load or read_load
    cores = os.cpu_count() or 1
    before = load()
    started = time.perf_counter()
    llc = last_level_cache_bytes()
    meter = _Meter(options.n_rounds)
    # launches first: after the bandwidth kernels the pool's threads sleep, and waking them
    # on a busy machine costs whole time slices
    launch = _launch(meter, options.quick)
    curve = _curve(meter, launch, options.quick)
    bandwidth = _bandwidth(curve, llc)
    allocation = _allocation(meter, llc, options.quick)
    launch["run"] = _run_overhead(launch, allocation, options.quick)
    launch["batch"] = _batch_overhead(launch, options.quick)
    launch.update(_block_by_block(launch, options.quick))
    ops = _operations(meter, options.quick)
    flops = _flops(meter, options.quick)
    after = load()
    reasons = []
    worst = max(before, after)
    if worst > options.max_load * cores:
        reasons.append(f"load average {worst:.2f} on {cores} cores (more than {options.max_load:g} per core): "
                       "other processes shared the machine")
    spread = statistics.median(meter.spreads.values())
    if spread > options.max_spread:
        worst_label = max(meter.spreads, key=meter.spreads.__getitem__)
        reasons.append(f"repeated measurements spread {spread:.0%} (median; worst {worst_label}: "
                       f"{meter.spreads[worst_label]:.0%}), more than {options.max_spread:.0%}")
    if launch["parallel"] > 50 * launch["serial"]:
        reasons.append(f"a parallel kernel's launch took {launch['parallel'] * 1e6:.0f} µs, "
                       f"{launch['parallel'] / launch['serial']:.0f} times a serial one's: its threads waited for cores")
    slow = _parallel_slower(bandwidth, ops)
    if slow:
        reasons.append(f"parallel kernels ran slower than serial ones ({', '.join(slow[:3])}"
                       f"{', ...' if len(slow) > 3 else ''}; their serial figures are kept): "
                       "another process held a core")
    figures = MachineFigures(
        host=platform.node() or "unknown", cpu=cpu_model(), cores=cores,
        threads=int(numba.get_num_threads()), llc_bytes=llc,
        bandwidth=bandwidth, launch=launch, allocation=allocation, ops=ops, curve=curve, flops=flops,
        measured=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        seconds=round(time.perf_counter() - started, 2), load=round(worst, 2), spread=round(spread, 3),
        noisy=bool(reasons), reasons=tuple(reasons), quick=options.quick, source="measured",
    )
    where = None
    if store:
        where = Path(path) if path is not None else machine_path()
        figures.save(where)
    return Calibration(figures, where)


def format_figures(f: MachineFigures) -> str:
    """The figures as a text table (what ``fusionlab calibrate --show`` prints).

    >>> from fusionlab.costs.timemodel import default_figures
    >>> print(format_figures(default_figures()).splitlines()[0])  # doctest: +ELLIPSIS
    machine figures: default figures ...
    """
    head = ("default figures for a 2-core AVX-512 virtual machine (no calibration file)" if f.source == "default"
            else f"{f.host}, {f.cpu}, {f.cores} cores, {f.threads} threads, measured {f.measured} in {f.seconds:g} s")
    lines = [f"machine figures: {head}",
             f"last-level cache {f.llc_bytes / 2**20:g} MiB; load {f.load:g}; spread {f.spread:.0%}"
             + ("; NOISY: " + "; ".join(f.reasons) if f.noisy else "")]
    lines.append(f"{'bandwidth GB/s':<24}{'parallel':>10}{'serial':>10}")
    for where, d in f.bandwidth.items():
        for kind, m in d.items():
            lines.append(f"  {where + ' ' + kind:<22}{m['parallel'] / 1e9:>10.1f}{m['serial'] / 1e9:>10.1f}")
    lines.append(f"{'kernel launch µs':<24}{f.launch['parallel'] * 1e6:>10.2f}{f.launch['serial'] * 1e6:>10.2f}"
                 f"   (+{f.launch.get('argument', 0.0) * 1e6:.2f} per argument; a run: {f.launch.get('run', 0.0) * 1e6:.1f}, "
                 f"each further batch: {f.launch.get('batch', 0.0) * 1e6:.1f})")
    lines.append(f"block by block µs: {f.launch.get('block', 0.0) * 1e6:.2f} per block, "
                 f"{f.launch.get('numpy', 0.0) * 1e6:.2f} per instruction NumPy runs")
    lines.append(f"allocation: {f.allocation['fixed'] * 1e6:.2f} µs + {f.allocation['per_byte'] * 1e12:.1f} µs/MB"
                 f" (fresh memory's page faults)")
    for kind, modes in f.curve.items():
        for mode, points in modes.items():
            lines.append(f"  {kind} {mode} GB/s by working set: "
                         + ", ".join(f"{b / 2**20:g} MiB {bw / 1e9:.0f}" for b, bw in points))
    for route, dtypes in f.flops.items():
        lines.append(f"  contraction by {route}: " + ", ".join(f"{dt} {1e-9 / s:.1f} GFLOP/s"
                                                             for dt, s in dtypes.items() if s > 0))
    lines.append(f"{'ns per element':<24}" + "".join(f"{d + ' par':>14}{d + ' ser':>14}" for d in DTYPES))
    for fam in FAMILIES:
        cells = []
        for d in DTYPES:
            m = f.ops.get(fam, {}).get(d)
            cells += [f"{m['parallel'] * 1e9:>14.3f}", f"{m['serial'] * 1e9:>14.3f}"] if m else [f"{'-':>14}"] * 2
        lines.append(f"  {fam:<22}" + "".join(cells))
    return "\n".join(lines)
