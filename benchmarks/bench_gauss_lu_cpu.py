"""Gauss elimination and LU (the corpus's gauss_pivot, lu_rows): CPU time of one thread.

NumPy (the workload's code), the hand-written loop and fusionlab's three drivers (compiled,
Python, block by block) on the same draws, after a warm-up that compiles; ``rounds``
interleaved rounds, medians of ``time.process_time`` (CPU seconds of this process: other
processes' load does not count) and of the wall clock. Numba runs one thread
(``NUMBA_NUM_THREADS=1``, set before Numba is imported). Runs against whichever fusionlab
is first on ``PYTHONPATH`` (the before / after of a change).

Run: ``NUMBA_NUM_THREADS=1 PYTHONPATH=. python benchmarks/bench_gauss_lu_cpu.py
[--cases lu_rows:medium,gauss_pivot:medium] [--rounds 5] [--out FILE]``.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import sys
import time
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any, Callable

os.environ.setdefault("NUMBA_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))


def _case(name: str, preset: str, rounds: int) -> dict[str, Any]:
    from bench_backend_refs import REFS

    from fusionlab.capture import capture
    from fusionlab.backend.numba.driver import Driver
    from fusionlab.backend.numba.plan import KernelCache
    from fusionlab.pipeline.runner import run_config
    from fusionlab.pipeline import build
    from fusionlab.workloads import corpus, get_workload

    kw = corpus.PRESETS[name][preset]
    refs = REFS[name]
    args = refs.args(kw)
    t = time.process_time()
    with redirect_stdout(io.StringIO()):
        cap = capture(get_workload(name).script(preset), {})
    built = build(cap, run_config("greedy", "bohrium", 4096, reroll=True))
    plans, inputs, externals = list(built.plans), dict(built.inputs), built.prepared.externals
    prepare = time.process_time() - t
    cache = KernelCache()
    variants: dict[str, Callable[[], Any]] = {"numpy": lambda: refs.numpy(*args), "loop": lambda: refs.loop(*args)}
    info: dict[str, str] = {}
    for mode in ("numba", "python", "blocks"):
        d = Driver(plans, externals, cache, inputs, mode=mode, threads=1)
        t = time.process_time()
        d()   # compiles
        info[f"fused {mode}"] = f"{d.runs}: {d.reason}"[:300] + f" (first run {time.process_time() - t:.2f} s CPU)"
        variants[f"fused {mode}"] = d
    for f in variants.values():
        f()
    cpu: dict[str, list[float]] = {k: [] for k in variants}
    wall: dict[str, list[float]] = {k: [] for k in variants}
    keys = list(variants)
    for r in range(rounds):
        for k in keys[r % len(keys):] + keys[:r % len(keys)]:
            w, c = time.perf_counter(), time.process_time()
            variants[k]()
            cpu[k].append(time.process_time() - c)
            wall[k].append(time.perf_counter() - w)
    med = {k: statistics.median(v) for k, v in cpu.items()}
    return {"name": name, "preset": preset, "prepare_cpu_s": round(prepare, 2),
            "cpu_ms": {k: round(v * 1e3, 3) for k, v in med.items()},
            "wall_ms": {k: round(statistics.median(v) * 1e3, 3) for k, v in wall.items()},
            "over_numpy": {k: round(med["numpy"] / v, 2) for k, v in med.items()},
            "over_loop": {k: round(v / med["loop"], 2) for k, v in med.items()}, "runs": info,
            "load": os.getloadavg()[0]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default="lu_rows:medium,gauss_pivot:medium,lu_rows:large,gauss_pivot:large")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--out", default="")
    args = ap.parse_args(argv)
    out = []
    for case in args.cases.split(","):
        name, preset = case.split(":")
        out.append(_case(name, preset, args.rounds))
        print(json.dumps(out[-1]), flush=True)
        if args.out:
            Path(args.out).write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
