""""Compile & time" for a ``%%fuse`` cell: the comparison against NumPy eager within a
compile budget, interruptible between kernels, and the report's ``timings`` section.

The comparison itself is :func:`fusionlab.pipeline.compare`; this module gives it the
cell's plain-NumPy baseline (the cell again on a copy of the namespace it started from),
a compile budget (:data:`DEFAULT_COMPILE_SECONDS`, ``%%fuse --compile-budget``) and
Kernel -> Interrupt handling, and turns its records into the report's ``timings``
(:func:`normalise_timings`): minimum, median, quartiles, spread, threads, whether other
processes were busy, and why a row was not timed. The choices: docs/explorer.md,
"Compile & time".

Examples
--------
>>> from fusionlab.ir.examples import fig3
>>> records, timings = time_program(fig3(), "greedy", ["bohrium"], None, repeat=1, compile_seconds=0.0)
>>> [r.not_timed for r in records]
['', 'not timed: compile budget of 0 s spent before this row']
>>> timings["records"][1]["median_seconds"] is None, timings["not_timed"]
(True, 1)
"""

from __future__ import annotations

import contextlib
import io
import os
import statistics
import time
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

import numpy as np

from fusionlab.support.budget import Interrupt

if TYPE_CHECKING:
    from fusionlab.pipeline import PipelineCaches, PipelineConfig

__all__ = ["DEFAULT_COMPILE_SECONDS", "DEFAULT_RUN_SECONDS", "SPREAD_WARNING", "time_program", "plain_baseline", "normalise_timings"]

# Seconds "Compile & time" may spend loading and compiling kernels (checked between
# kernels). LU by row operations at n = 60 needed 62 s for two cost models; a student's
# click should come back within half a minute with what fits, saying what did not.
DEFAULT_COMPILE_SECONDS = 30.0
# Seconds the timed runs and the check may take together (checked between runs, each
# predicted before it starts). A 10^8-element cell took 10-17 s a plain run on the shared
# machine; unbudgeted, its 24 runs held the kernel for more than 268 s.
DEFAULT_RUN_SECONDS = 30.0
# A timing spread ((q3 - q1) / median, or (median - min) / median when no quartiles) above
# this gets a warning.
SPREAD_WARNING = 0.10


def time_program(target: Any, algorithm: str, models: Sequence[Any], baseline: Callable[[], None] | None,
                 repeat: int = 3, progress: Callable[[str, int, int], None] | None = None,
                 compile_seconds: float | None = DEFAULT_COMPILE_SECONDS,
                 kernel_cache: Any = None, reroll: bool = True, run_seconds: float | None = DEFAULT_RUN_SECONDS,
                 caches: PipelineCaches | None = None, options: Mapping[str, Mapping[str, Any]] | None = None,
                 config: PipelineConfig | None = None,
                 variants: Sequence[Mapping[int, Sequence[Sequence[int]]]] | None = None) -> tuple[list[Any], dict[str, Any]]:
    """Compile and time ``algorithm``'s partition of ``target`` (a capture or a program)
    under each of ``models`` against NumPy eager (``baseline``, or the source run
    plainly); returns the records and the report's ``timings``.

    Kernels load and compile within ``compile_seconds`` (``None``: no limit); a row whose
    kernels do not fit is not timed and says so. Kernel -> Interrupt stops the work
    between kernels (or in a timed run): the rows done are kept, the others are marked
    interrupted, and this returns normally. ``kernel_cache``: a :class:`~fusionlab.backend.numba.plan.KernelCache` kept between
    clicks, so a second click goes on where the budget stopped the first (the kernels
    imported and compiled stay in memory). ``reroll``: the batches rerolled first
    (:mod:`fusionlab.passes.reroll`), as the explorer shows them. ``caches``: the pipeline's caches
    (:class:`~fusionlab.pipeline.PipelineCaches`: the explorer's partitions, reused instead of
    computed again, for a big batch's greedy can take the whole budget; the kernel plans,
    for planning thousands of kernels takes seconds), kept between clicks.

    The timed runs and the check take at most ``run_seconds`` together (``None``: no
    limit): a row takes as many runs as fit in its share and says when it took fewer, a
    row none of whose runs fit is not timed, and values not checked say "not checked"
    (:mod:`fusionlab.pipeline.timed_runs`). ``variants``: partitions given per row instead
    (:func:`~fusionlab.pipeline.compare`'s: a waterfall's, under ``models[0]``).
    """
    from fusionlab.pipeline import compare

    intr = Interrupt()
    before = _cpu_snapshot()
    try:
        with intr.armed():
            records = compare(target, [algorithm], models, repeat=repeat, baseline=baseline, progress=progress,
                              compile_seconds=compile_seconds, interrupt=intr, keep_on_interrupt=True,
                              cache=kernel_cache, reroll=reroll, run_seconds=run_seconds, caches=caches,
                              options=options, config=config, variants=variants)
    finally:
        intr.acknowledge()
    timings = normalise_timings([r.to_dict() for r in records], repeat, _others(before, _cpu_snapshot()),
                                _threads(), protocol=getattr(records, "protocol", None))
    return records, timings


def plain_baseline(source: str, start: Mapping[str, Any] | None) -> Callable[[], None] | None:
    """The cell again with plain NumPy, on a copy of the namespace it started from, so
    timing never changes the user's variables (``None`` without a source)."""
    if not source:
        return None
    start = start or {}

    def baseline() -> None:
        ns = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in start.items()}
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(source, "<numpy>", "exec"), ns)

    return baseline


def _cpu_snapshot() -> tuple[float | None, float, float]:
    """(CPU seconds all processes used, CPU seconds this process used, wall clock)."""
    system = None
    try:
        with open("/proc/stat", encoding="ascii") as fh:
            fields = [int(x) for x in fh.readline().split()[1:]]
        # user nice system idle iowait irq softirq steal: all but idle and iowait are busy
        system = (sum(fields[:8]) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):  # not Linux: the load average instead
        system = None
    t = os.times()
    return system, t.user + t.system, time.perf_counter()


def _others(before: tuple[float | None, float, float], after: tuple[float | None, float, float]) -> float | None:
    """Cores other processes kept busy on average between two snapshots (``None`` unknown)."""
    wall = after[2] - before[2]
    if before[0] is None or after[0] is None or wall <= 0:
        try:
            return max(os.getloadavg()[0] - 1.0, 0.0)  # the load average counts us once
        except (AttributeError, OSError):
            return None
    return max((after[0] - before[0]) - (after[1] - before[1]), 0.0) / wall


def _threads() -> int | None:
    try:
        import numba

        return int(numba.get_num_threads())
    except Exception:  # numba missing or its threading layer not started: unknown
        return None


def _clean(d: dict[str, Any]) -> dict[str, Any]:
    # JSON has no infinity or NaN (a speed-up over a zero-time run): the report says null
    out = dict(d)
    for k, v in out.items():
        if isinstance(v, float) and (v != v or v in (float("inf"), float("-inf"))):
            out[k] = None
    return out


def _record(d: Mapping[str, Any], repeat: int, threads: int | None, busy: bool) -> dict[str, Any]:
    r = _clean(dict(d))
    samples = r.get("samples")
    if isinstance(samples, (list, tuple)):  # the raw times: quartiles from them
        times = sorted(float(t) for t in samples)
        if len(times) >= 2 and r.get("q1_seconds") is None:
            q = statistics.quantiles(times, n=4, method="inclusive")
            r["q1_seconds"], r["q3_seconds"] = q[0], q[2]
        samples = len(times) or None
    r["samples"] = int(samples) if samples is not None else repeat
    r["not_timed"] = r.get("not_timed") or ""
    r["not_checked"] = r.get("not_checked") or ""  # timed, but its values not compared with plain NumPy
    if r["not_timed"]:  # no run was timed: no samples, and no figure where none was measured
        r["samples"] = 0
        for key in ("blocks", "kernels", "compile_seconds"):
            if not r.get(key):
                r[key] = None
    r.setdefault("q1_seconds", None)
    r.setdefault("q3_seconds", None)
    med, low = r["median_seconds"], r["min_seconds"]
    if med and not r["q1_seconds"] and not r["q3_seconds"]:  # zeros: quartiles not measured
        r["q1_seconds"] = r["q3_seconds"] = None
    if r["q1_seconds"] is not None and r["q3_seconds"] is not None and med:
        r["spread"] = (r["q3_seconds"] - r["q1_seconds"]) / med
        gap = r["spread"]
    else:
        r["spread"] = None
        gap = (med - low) / med if med else 0.0
    # the executor says 0 threads for NumPy's own row: NumPy eager runs on one thread
    r["threads"] = r.get("threads") or (1 if r["cost_model"] == "numpy" else threads)
    r["busy"] = bool(r.get("busy")) or busy
    warnings = list(r.get("warnings") or [])
    if gap > SPREAD_WARNING:
        what = f"spread {gap:.0%} of the median" if r["spread"] is not None else \
            f"the minimum is {gap:.0%} below the median"
        warnings.append(f"{what}: the times vary; run again on a quiet machine")
    if r["busy"] and not any("other processes" in w for w in warnings):  # the executor may have said it
        warnings.append("the executor saw other processes use the cores while timing: figures may be slow")
    r["warnings"] = warnings
    return r


def normalise_timings(records: Sequence[Mapping[str, Any]], repeat: int, others: float | None,
                      threads: int | None, busy_cores: float = 0.25,
                      protocol: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The ``timings`` section from the executor's records: each record gets minimum,
    median, quartiles and spread (null when the executor measured no quartiles), samples,
    threads, ``busy`` and warnings, computed from the fields present.

    ``others`` is the number of cores other processes kept busy on average while timing;
    above ``busy_cores`` the table is marked busy (a record's own ``busy`` also counts).
    ``protocol``: how the comparison timed its rows (:attr:`fusionlab.pipeline.comparison.Comparison.protocol`:
    rounds, warm-up rounds, where the draws were timed, the interval), kept as it is.

    >>> t = normalise_timings([{"cost_model": "bohrium", "algorithm": "greedy", "median_seconds": 0.01,
    ...                         "min_seconds": 0.005, "speedup": 1.0}], 3, 0.1, 2)
    >>> r = t["records"][0]
    >>> r["spread"], r["samples"], r["threads"], r["busy"], r["warnings"][0][:35]
    (None, 3, 2, False, 'the minimum is 50% below the median')
    """
    busy = others is not None and others > busy_cores
    out = [_record(r, repeat, threads, False) for r in records]
    warnings = []
    if busy:
        warnings.append(f"other processes kept {others:.2f} cores busy on average while timing (of "
                        f"{os.cpu_count() or 1}): the figures may be slow and noisy; rerun when the machine is quiet")
        for r in out:
            r["busy"] = True
    return {"repeat": repeat, "records": out, "threads": threads, "busy": busy or any(r["busy"] for r in out),
            "others_cores": None if others is None else round(others, 3), "warnings": warnings,
            "protocol": _clean(dict(protocol)) if protocol else None,
            "not_timed": sum(1 for r in out if r["not_timed"]),
            "not_checked": sum(1 for r in out if r["not_checked"])}


