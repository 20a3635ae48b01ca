"""Rerolling's effect on LU by row operations (``lu_rows``): instructions, kernels, and the
seconds of capture, rerolling, planning (greedy / Bohrium) and the runs, with and without.

Usage: ``python benchmarks/reroll_lu.py N [--no-run] [--off]`` (a sanity measurement, not a
published figure: the lead reruns those on a quiet machine)."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import time

from fusionlab.capture import capture
from fusionlab.backend.numba.driver import Driver
from fusionlab.backend.numba.plan import DEFAULT_MIN_SIZE, KernelCache
from fusionlab.pipeline.runner import run_config
from fusionlab.pipeline import plans as plan_batches, prepare
from fusionlab.workloads import get_workload


def measure(n: int, reroll: bool, execute: bool) -> dict:
    out: dict = {"n": n, "reroll": reroll}
    t = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        cap = capture(get_workload("lu_rows").script("tiny").replace("n=8", f"n={n}"), {})
    out["capture_s"] = time.perf_counter() - t
    out["instructions_captured"] = sum(len(b) for b in cap.batches)
    t = time.perf_counter()
    config = run_config("greedy", "bohrium", DEFAULT_MIN_SIZE, reroll)
    prepared = prepare(cap, config)
    batches = prepared.programs
    out["reroll_s"] = time.perf_counter() - t
    out["instructions"] = sum(len(b) for b in batches)
    t = time.perf_counter()
    plans = plan_batches(batches, config).plans
    out["plan_s"] = time.perf_counter() - t
    specs = {bp.compiled.key for p in plans for bp in p.blocks if bp.compiled is not None}
    out["kernel_calls"] = sum(1 for p in plans for bp in p.blocks if bp.compiled is not None)
    out["distinct_kernels"] = len(specs)
    if execute:
        for mode in ("python", "numba"):
            drv = Driver(list(plans), cap.externals, KernelCache(), dict(prepared.inputs), mode=mode)
            t = time.perf_counter()
            drv()
            out[f"{mode}_first_run_s"] = time.perf_counter() - t
            t = time.perf_counter()
            for _ in range(3):
                drv()
            out[f"{mode}_run_s"] = (time.perf_counter() - t) / 3
            out[f"{mode}_driver"] = drv.runs + (f": {drv.reason}" if drv.reason else "")
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("n", type=int)
    ap.add_argument("--off", action="store_true", help="without rerolling")
    ap.add_argument("--no-run", action="store_true", help="capture and plan only")
    a = ap.parse_args()
    print(json.dumps(measure(a.n, not a.off, not a.no_run)))
