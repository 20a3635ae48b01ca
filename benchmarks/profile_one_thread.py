"""Single-thread CPU-time profile of a backend-benchmark row: NumPy against the fused run
(compiled driver), both on one thread, interleaved in one process, medians of
``time.process_time``; with ``--kernels`` each kernel's time and source.

A run on one thread is what the shared-machine column (one competing busy process on a
two-core machine) gives both sides, and CPU time is robust to other processes' load.

Run: ``PYTHONPATH=. NUMBA_NUM_THREADS=1 .venv/bin/python benchmarks/profile_one_thread.py
histogram_equalize --preset medium [--kernels]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

import numba

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_backend import DEFAULT_CHUNKS_PER_THREAD, capture_and_plan, configure  # noqa: E402
from bench_backend import REFS, share_draws  # noqa: E402
from bench_backend import get_workload  # noqa: E402

from fusionlab.backend.numba.driver import Driver  # noqa: E402
from fusionlab.backend.numba.plan import KernelCache, run_plan  # noqa: E402
from fusionlab.runtime.reference import Storage  # noqa: E402


def cpu_rounds(fns: dict[str, Callable[[], object]], rounds: int) -> dict[str, list[float]]:
    """CPU seconds of each function, round-robin, ``rounds`` times."""
    out: dict[str, list[float]] = {k: [] for k in fns}
    for r in range(rounds):
        names = list(fns)
        names = names[r % len(names):] + names[:r % len(names)]
        for k in names:
            t = time.process_time()
            fns[k]()
            out[k].append(time.process_time() - t)
    return out


def with_competitor(fns: dict[str, Callable[[], object]], rounds: int, drv: Any) -> dict[str, Any]:
    """Wall-clock medians while one other process spins (as bench_backend's shared-machine
    column), Numba's threads left to the driver's policy; and the thread counts it chose."""
    import subprocess
    from bench_backend import COMPETITOR
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    proc = subprocess.Popen([sys.executable, "-c", COMPETITOR.format(bound=120)])
    try:
        time.sleep(0.5)
        out: dict[str, list[float]] = {k: [] for k in fns}
        chosen = []
        for r in range(rounds):
            for k in list(fns)[r % len(fns):] + list(fns)[:r % len(fns)]:
                t = time.perf_counter()
                fns[k]()
                out[k].append(time.perf_counter() - t)
                if k == "fused":
                    chosen.append(drv.choice.threads)
    finally:
        proc.kill()
    med = {k: statistics.median(v) * 1e3 for k, v in out.items()}
    print(f"  with a competitor (wall, load {os.getloadavg()[0]:.1f}): " + ", ".join(f"{k} {v:.2f} ms" for k, v in med.items())
          + f"; numpy/fused {med['numpy'] / med['fused']:.2f}x; driver threads {sorted(set(chosen))}")
    return {"median_ms": med, "threads": chosen}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("row")
    ap.add_argument("--preset", default="medium")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--kernels", action="store_true", help="time each kernel (block by block) and print sources")
    ap.add_argument("--json", default=None)
    ap.add_argument("--competitor", action="store_true",
                    help="also time wall clock with one competing busy process (threads as the driver sizes them)")
    a = ap.parse_args()
    numba.set_num_threads(1)
    w = get_workload(a.row)
    kw = w.kwargs(a.preset)
    cap, built = capture_and_plan(a.row, a.preset, 300)
    plans, inputs, externals = list(built.plans), dict(built.inputs), built.prepared.externals
    cache = KernelCache()
    refs = REFS[a.row]
    args = refs.args(kw)
    share_draws(externals, args)   # every variant reads the same draws (as bench_backend does)
    drv = Driver(plans, externals, cache, inputs, mode="numba")
    fns = {"numpy": lambda: refs.numpy(*args), "fused": drv, "loop": lambda: refs.loop(*args)}
    for f in fns.values():
        f()
    numba.set_num_threads(1)
    times = cpu_rounds(fns, a.rounds)
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"{a.row} {a.preset} at most {numba.config.NUMBA_NUM_THREADS} thread(s) (NUMBA_NUM_THREADS), CPU time, load {os.getloadavg()[0]:.1f}: " +
          ", ".join(f"{k} {v * 1e3:.2f} ms" for k, v in med.items()) +
          f"; numpy/fused {med['numpy'] / med['fused']:.2f}x, numpy/loop {med['numpy'] / med['loop']:.2f}x")
    result: dict[str, Any] = {"row": a.row, "preset": a.preset, "median_ms": {k: v * 1e3 for k, v in med.items()}}
    if a.kernels:
        configure(None, elements=1)
        numba.set_num_threads(1)
        per: dict[str, list[float]] = {}
        for _ in range(a.rounds):
            st = Storage(inputs, pool=cache.pool)
            timings: dict[str, float] = {}
            for p in plans:
                run_plan(p, st, externals, cache, timings, chunks=0)
            for k, v in timings.items():
                per.setdefault(k, []).append(v)
        for k, v in sorted(per.items(), key=lambda kv: -statistics.median(kv[1])):
            print(f"  kernel {k}: {statistics.median(v) * 1e3:.3f} ms")
        result["kernels_ms"] = {k: statistics.median(v) * 1e3 for k, v in per.items()}
        seen = set()
        for p in plans:
            for b in p.blocks:
                spec = b.compiled
                if spec is not None and spec.source not in seen:
                    seen.add(spec.source)
                    print(f"# block {b.numbered}: " + "; ".join(str(p.program[i]) for i in b.instructions))
                    print(spec.source)
    if a.competitor:
        result["competitor"] = with_competitor(fns, a.rounds, drv)
    if a.json:
        Path(a.json).write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
