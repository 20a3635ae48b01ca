"""One-thread CPU time of the shared-machine rows "Cumsum of a map, then a map" and
"Normalize2 (filter and folds)" (issue 13; h-scan's measurements).

With one competing busy process on a two-core machine the fused run gets one thread
(``fusionlab.backend.numba.threads``) and NumPy has one core: the shared-machine speed-up is about
NumPy's one-thread time over the fused run's. CPU time (``time.process_time``) of one
thread is robust to other processes' load; each variant is timed interleaved with the
others in this process, medians of ``--rounds``. Run with ``NUMBA_NUM_THREADS=1``::

    NUMBA_NUM_THREADS=1 python benchmarks/scan_single_thread.py --rounds 9

It also times the parts that bound the rows: ``np.sin`` alone (NumPy's float64 sine),
Numba's scalar libm loop and the strip's polynomial sine (``fusionlab.backend.numba.strip``).
Writes ``benchmarks/results/scan.json``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

import numba
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_backend import get_workload, share_draws  # noqa: E402
from bench_combinator_refs import COMBINATOR_REFS  # noqa: E402
from fusionlab.capture import capture  # noqa: E402
from fusionlab.backend.numba.strip import TRIG_HELPERS  # noqa: E402
from fusionlab.backend.numba.driver import Driver  # noqa: E402
from fusionlab.backend.numba.plan import DEFAULT_MIN_SIZE, KernelCache  # noqa: E402
from fusionlab.pipeline.runner import run_config  # noqa: E402
from fusionlab.pipeline import build  # noqa: E402

_HELPERS: dict[str, Any] = {}
exec(TRIG_HELPERS, _HELPERS)
_VSIN = _HELPERS["_vsin"]


@numba.njit(error_model="numpy", cache=True)
def libm_sin(x, out):  # type: ignore[no-untyped-def]
    for i in range(x.shape[0]):
        out[i] = math.sin(x[i])


@numba.njit(error_model="numpy")
def poly_sin(x, out):  # type: ignore[no-untyped-def]
    for i in range(x.shape[0]):
        out[i] = _VSIN(x[i])


def medians(fns: dict[str, Callable[[], object]], rounds: int) -> dict[str, float]:
    """CPU-time medians (ms), the variants interleaved round by round."""
    for f in fns.values():
        f()
    times: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(rounds):
        for k, f in fns.items():
            t = time.process_time()
            f()
            times[k].append(time.process_time() - t)
    return {k: statistics.median(v) * 1e3 for k, v in times.items()}


def row(name: str, preset: str, rounds: int, cache: KernelCache) -> dict[str, Any]:
    w = get_workload(name)
    kw = w.kwargs(preset)
    with contextlib.redirect_stdout(io.StringIO()):
        cap = capture(w.script(preset), {})
    built = build(cap, run_config("greedy", "bohrium", DEFAULT_MIN_SIZE, reroll=True))
    plans, inputs, externals = list(built.plans), dict(built.inputs), built.prepared.externals
    refs = COMBINATOR_REFS[name]
    args = refs.args(kw)
    share_draws(externals, args)
    fns: dict[str, Callable[[], object]] = {"numpy": lambda: refs.numpy(*args), "loop": lambda: refs.loop(*args),
                                            "fusionlab": Driver(plans, externals, cache, inputs, mode="numba")}
    if name == "cumsum_map":
        (x,) = args
        out = np.empty_like(x)
        fns.update({"np.sin alone": lambda: np.sin(x, out=out), "Numba libm sin loop": lambda: libm_sin(x, out),
                    "polynomial sin loop": lambda: poly_sin(x, out)})
    med = medians(fns, rounds)
    return {"workload": name, "preset": preset, "kwargs": kw, "load": os.getloadavg()[0], "cpu_ms": med,
            "numpy_over_fusionlab": med["numpy"] / med["fusionlab"], "numpy_over_loop": med["numpy"] / med["loop"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", default="cumsum_map,normalize2")
    ap.add_argument("--presets", default="medium,large")
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent / "results" / "scan.json"))
    a = ap.parse_args()
    if numba.config.NUMBA_NUM_THREADS != 1:
        sys.exit("run with NUMBA_NUM_THREADS=1 (one thread, as under one competing process)")
    cache = KernelCache()
    results = []
    for name in a.rows.split(","):
        for preset in a.presets.split(","):
            r = row(name, preset, a.rounds, cache)
            results.append(r)
            print(f"{name:12s} {preset:6s} load {r['load']:.1f}  " + "  ".join(
                f"{k} {v:.1f}" for k, v in r["cpu_ms"].items()) + f"  NumPy/fused {r['numpy_over_fusionlab']:.2f}x",
                flush=True)
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    Path(a.out).write_text(json.dumps({"measured": stamp, "what": "one-thread CPU time, ms, medians", "rows": results},
                                      indent=1) + "\n")


if __name__ == "__main__":
    main()
