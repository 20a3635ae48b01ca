"""Compile time of a run's compiled driver against its number of kernel calls (issue 13).

A run of N calls of one small kernel on N different views (``ADD A[8k:8k+8], A[8k:8k+8], 1.0``,
one block each: the calls differ only in offsets) is compiled as a driver twice: folded
(its calls one loop over a table: :mod:`fusionlab.backend.numba.driver_loops`) and unfolded (N
call sites, as before the loops). Each point is measured in a fresh kernel cache and a
fresh Numba cache (CPU seconds of this process, one thread: the driver's compilation,
the kernel compiled before), then the per-call cost of both forms, compiled and as Python,
on the same run (medians of interleaved rounds). Also: a NumPy ufunc call on a small view
from Python against the same serial kernel called from Python and from a compiled loop
(the small-block choice, docs/backend.md).

Run: ``PYTHONPATH=. python benchmarks/bench_driver_compile.py [--calls 10,100,500,2000]
[--unfolded 10,50,100,200] [--out benchmarks/results/driver.json]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def _program(n: int, width: int = 8) -> Any:
    from fusionlab import parse

    lines = [f"ARRAY A float64[{n * width}]", "RANGE A"]
    lines += [f"ADD A[{k * width}:{(k + 1) * width}], A[{k * width}:{(k + 1) * width}], 1.0" for k in range(n)]
    lines.append("SYNC A")
    return parse("\n".join(lines))


def _compile_point(n: int, folded: bool) -> dict[str, Any]:
    """Compile the N-call driver in a fresh cache; CPU seconds of the driver alone."""
    import fusionlab.backend.numba.driver as drv
    from fusionlab.backend.numba.driver import Driver
    from fusionlab.backend.numba.driver_loops import fold
    from fusionlab.backend.numba.plan import KernelCache, plan
    from fusionlab.runtime.reference import Externals

    p = _program(n)
    plans = [plan(p, [[i] for i in range(len(p))], min_size=1 << 30)]
    real = drv.fold
    if not folded:
        drv.fold = lambda body, *a, **k: fold(body, max_period=0)  # type: ignore[assignment]
    try:
        with tempfile.TemporaryDirectory() as tmp:
            cache = KernelCache(directory=Path(tmp))
            Driver(plans, Externals(), cache, mode="blocks", threads=1)()   # the kernel, compiled
            d = Driver(plans, Externals(), cache, mode="numba", max_calls=None, threads=1)
            t = time.process_time()
            out = d()
            seconds = time.process_time() - t
    finally:
        drv.fold = real
    assert d.runs == "compiled driver", d.reason
    ok = bool((out["A"] == __import__("numpy").arange(n * 8.0) + 1).all())
    return {"calls": n, "folded": folded, "call_sites": d.spec.call_sites, "compile_cpu_s": round(seconds, 3),
            "lines": d.spec.source.count("\n") + 1, "equal_to_numpy": ok}


def _per_call(n: int, rounds: int = 15) -> dict[str, float]:
    """µs per call of the N-call run: folded / unfolded, compiled / Python (warm)."""
    import fusionlab.backend.numba.driver as drv
    from fusionlab.backend.numba.driver import Driver
    from fusionlab.backend.numba.driver_loops import fold
    from fusionlab.backend.numba.plan import KernelCache, plan
    from fusionlab.runtime.reference import Externals

    p = _program(n)
    plans = [plan(p, [[i] for i in range(len(p))], min_size=1 << 30)]
    cache = KernelCache()
    runs: dict[str, Driver] = {}
    real = drv.fold
    for folded in (True, False):
        if not folded:
            drv.fold = lambda body, *a, **k: fold(body, max_period=0)  # type: ignore[assignment]
        for mode in ("numba", "python"):
            d = Driver(plans, Externals(), cache, mode=mode, max_calls=None, threads=1)
            d()
            runs[f"{'folded' if folded else 'unfolded'} {mode}"] = d
        drv.fold = real
    runs["blocks"] = Driver(plans, Externals(), cache, mode="blocks", threads=1)
    runs["blocks"]()
    times: dict[str, list[float]] = {k: [] for k in runs}
    for _ in range(rounds):
        for k, d in runs.items():
            t = time.process_time()
            d()
            times[k].append(time.process_time() - t)
    return {k: round(statistics.median(v) / n * 1e6, 3) for k, v in times.items()}


def _small_blocks(sizes: list[int], rounds: int = 2000) -> list[dict[str, Any]]:
    """A NumPy ufunc on a view of N elements from Python, the same serial kernel called from
    Python, and from a compiled loop: µs per call (CPU time, medians of 5 batches)."""
    import numba
    import numpy as np

    @numba.njit(cache=False)
    def kernel(a: Any, b: Any, n: Any) -> None:
        for i in range(n):
            a[i] = a[i] + b[i]

    @numba.njit(cache=False)
    def looped(a: Any, b: Any, n: Any, reps: int) -> None:
        for _ in range(reps):
            kernel(a[0:n], b[0:n], np.uint64(n))

    out = []
    for n in sizes:
        a, b = np.zeros(n + 8), np.ones(n + 8)
        kernel(a[0:n], b[0:n], np.uint64(n))
        looped(a, b, n, 1)
        reps = max(10, rounds * 100 // max(n, 100))
        res: dict[str, list[float]] = {"numpy from Python": [], "kernel from Python": [], "kernel from compiled": []}
        for _ in range(5):
            t = time.process_time()
            for _ in range(reps):
                np.add(a[0:n], b[0:n], out=a[0:n])
            res["numpy from Python"].append(time.process_time() - t)
            t = time.process_time()
            for _ in range(reps):
                kernel(a[0:n], b[0:n], np.uint64(n))
            res["kernel from Python"].append(time.process_time() - t)
            t = time.process_time()
            looped(a, b, n, reps)
            res["kernel from compiled"].append(time.process_time() - t)
        out.append({"elements": n, **{k: round(statistics.median(v) / reps * 1e6, 3) for k, v in res.items()}})
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", default="10,100,500,2000")
    ap.add_argument("--unfolded", default="10,50,100,200")
    ap.add_argument("--sizes", default="10,100,1000,10000,100000")
    ap.add_argument("--out", default="benchmarks/results/driver.json")
    args = ap.parse_args(argv)
    os.environ.setdefault("NUMBA_NUM_THREADS", "2")
    result: dict[str, Any] = {"load_before": os.getloadavg()[0], "compile": [], "per_call_us": {}, "small_blocks_us": []}
    for n in map(int, args.calls.split(",")):
        result["compile"].append(_compile_point(n, True))
        print(result["compile"][-1], flush=True)
    for n in map(int, args.unfolded.split(",")):
        result["compile"].append(_compile_point(n, False))
        print(result["compile"][-1], flush=True)
    result["per_call_us"] = _per_call(200)
    print(result["per_call_us"], flush=True)
    result["small_blocks_us"] = _small_blocks([int(x) for x in args.sizes.split(",")])
    for row in result["small_blocks_us"]:
        print(row, flush=True)
    result["load_after"] = os.getloadavg()[0]
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
