"""How fused runs hold up on a shared machine: a measurement, run as a script.

``python -m fusionlab.pipeline.shared_machine [--size 1200] [--steps 8] [--rounds 7]``
times a 2-D reaction-diffusion program (two fields, 5-point Laplacians, in-place updates
of the interior views, ``steps`` steps in one batch) with plain NumPy and fused (compiled
driver), quiet and with competing processes that spin on a core (``while True: pass``),
under three thread policies:

- ``static``: every launched Numba thread, Numba's static schedule (one equal share per
  thread: the behaviour before issue 13);
- ``chunked``: every thread, the loop handed out in chunks (``numba.set_parallel_chunksize``);
- ``free``: threads sized to the free cores at each run's start, chunked when more than one
  (:func:`fusionlab.backend.numba.threads.configure`, the default of every run).

It prints one JSON object per (competitors, policy) with the medians and the speed-up over
NumPy measured in the same rounds; docs/backend.md ("Shared machine") has the figures.
"""

from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys
import time
from contextlib import redirect_stdout
from typing import Any, Callable

from fusionlab.support.timing import median_seconds

SOURCE = """
import numpy as np
n = {n}
rng = np.random.default_rng(0)
u = np.ones((n, n)); v = np.zeros((n, n))
u[n // 2 - 10:n // 2 + 10, n // 2 - 10:n // 2 + 10] = 0.5
v[n // 2 - 10:n // 2 + 10, n // 2 - 10:n // 2 + 10] = 0.25
du, dv, f, k, dt = 0.16, 0.08, 0.035, 0.065, 1.0
for _ in range({steps}):
    lu = u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4 * u[1:-1, 1:-1]
    lv = v[:-2, 1:-1] + v[2:, 1:-1] + v[1:-1, :-2] + v[1:-1, 2:] - 4 * v[1:-1, 1:-1]
    uvv = u[1:-1, 1:-1] * v[1:-1, 1:-1] * v[1:-1, 1:-1]
    u[1:-1, 1:-1] += dt * (du * lu - uvv + f * (1 - u[1:-1, 1:-1]))
    v[1:-1, 1:-1] += dt * (dv * lv + uvv - (f + k) * v[1:-1, 1:-1])
"""


def measure(size: int = 1200, steps: int = 8, rounds: int = 7, competitors: tuple[int, ...] = (0, 1)) -> list[dict[str, Any]]:
    """Medians of NumPy and of the fused run under each thread policy, per number of competitors."""
    import numba

    from fusionlab.capture import capture
    from fusionlab.pipeline import build
    from fusionlab.backend.numba.driver import Driver
    from fusionlab.backend.numba.plan import KernelCache
    from fusionlab.pipeline.runner import run_config

    source = SOURCE.format(n=size, steps=steps)
    with redirect_stdout(io.StringIO()):
        cap = capture(source, {})
    built = build(cap, run_config("greedy", "bohrium", 4096, reroll=False))
    plans, inputs, externals = list(built.plans), dict(built.inputs), built.prepared.externals
    cache = KernelCache()
    all_threads = numba.config.NUMBA_NUM_THREADS
    drivers = {
        "static": Driver(plans, externals, cache, inputs, mode="numba", threads=all_threads, chunks_per_thread=0),
        "chunked": Driver(plans, externals, cache, inputs, mode="numba", threads=all_threads),
        "free": Driver(plans, externals, cache, inputs, mode="numba"),
    }
    code = compile(source, "<numpy>", "exec")

    def numpy_run() -> None:
        exec(code, {"__name__": "__main__"})

    for d in drivers.values():
        d()   # compile (or load) once
    rows = []
    for n_comp in competitors:
        procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n_comp)]
        try:
            time.sleep(0.5)
            base = median_seconds(numpy_run, rounds, warmup=False)
            for name in drivers:
                med = median_seconds(drivers[name], rounds, warmup=False)
                choice = drivers[name].choice
                rows.append({"competitors": n_comp, "policy": name, "numpy_ms": round(base * 1e3, 2),
                             "fused_ms": round(med * 1e3, 2), "speedup": round(base / med, 2),
                             "threads": choice.threads if choice else None,
                             "chunksize": choice.chunksize if choice else None})
        finally:
            for p in procs:
                p.kill()
                p.wait()
    return rows


def main(argv: list[str] | None = None) -> int:
    """Print the measurement's rows as JSON lines."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=1200)
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--competitors", default="0,1")
    args = ap.parse_args(argv)
    for row in measure(args.size, args.steps, args.rounds, tuple(int(c) for c in args.competitors.split(","))):
        print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
