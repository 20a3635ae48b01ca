"""Where a new cell's first run spends its time, with an empty kernel cache and a warm one (issue 38).

In a class every student's cell is new: the kernel cache is cold for the cell that matters.
For each program of the table this script starts a fresh Python process twice on one
temporary cache folder (``FUSIONLAB_CACHE``): first with the folder empty (**cold**), then
again with what the first process left there (**warm**). Each process measures, in order:

- ``import``: NumPy, fusionlab's pipeline and the runner (which loads Numba);
- ``capture``: the workload's script run under the recorder;
- ``plan``: the whole pipeline (:func:`fusionlab.pipeline.build`: the preparing passes,
  greedy under Bohrium, the kernel plans and their sources);
- ``first run``: the run's first call, which compiles (or loads) every kernel and runs;
- ``run``: the median of three further runs (nothing left to compile);
- ``compile`` = first run - run: what compiling (or loading) the kernels cost;
- ``kernels``: the kernels the plans call, and how many distinct sources they are.

JAX's ``jax.jit`` (XLA on the CPU) is timed on the same program where a ``jnp`` form is
written below (first call, which traces and compiles, and the median of three later calls);
without ``jax`` installed (``make bench`` installs the ``bench`` extra) its columns say so.

The table goes to ``benchmarks/README.md`` (section ``cold_start``). Run:
``.venv/bin/python benchmarks/bench_cold_start.py [--only gray_scott] [--preset large]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from _report import write_section

HERE = Path(__file__).resolve().parent

#: the table's programs: (workload, preset); Gray-Scott 1200 x 1200 x 8 steps is issue 38's
PROGRAMS: tuple[tuple[str, str], ...] = (
    ("gray_scott", "large"),
    ("wave_1d", "medium"),
    ("heat_equation", "medium"),
    ("softmax", "medium"),
    ("black_scholes", "medium"),
    ("jacobi_poisson", "medium"),
    ("kmeans_step", "medium"),
)


def _child(name: str, preset: str) -> dict[str, Any]:
    """One process's measurement of ``name`` (run with ``FUSIONLAB_CACHE`` set by the parent)."""
    t = time.perf_counter()
    import numpy as np  # noqa: F401

    from fusionlab.backend.numba.plan import KernelCache
    from fusionlab.capture import capture
    from fusionlab.pipeline import build
    from fusionlab.pipeline.runner import DEFAULT_MIN_SIZE, run, run_config
    from fusionlab.workloads import ALL_WORKLOADS

    out: dict[str, Any] = {"import": time.perf_counter() - t}
    script = ALL_WORKLOADS[name].script(preset)
    t = time.perf_counter()
    cap = capture(script, {"__name__": "__main__"})
    out["capture"] = time.perf_counter() - t
    t = time.perf_counter()
    built = build(cap, run_config("greedy", "bohrium", DEFAULT_MIN_SIZE, True))
    out["plan"] = time.perf_counter() - t
    kernels = [bp.compiled for plan in built.plans for bp in plan.blocks if bp.compiled is not None]
    out["kernels"], out["distinct"] = len(kernels), len({k.source for k in kernels})
    cache = KernelCache()
    t = time.perf_counter()
    result = run(cap, plans=built.plans, cache=cache, repeat=3)
    out["first_run"] = result.seconds
    out["run"] = statistics.median(result.times)
    out["compile"] = max(0.0, out["first_run"] - out["run"])
    out["wall"] = time.perf_counter() - t
    out["driver"] = result.driver
    return out


def _measure(name: str, preset: str, cache_dir: str) -> dict[str, Any]:
    env = {**os.environ, "FUSIONLAB_CACHE": cache_dir, "PYTHONPATH": str(HERE.parent)}
    done = subprocess.run([sys.executable, __file__, "--child", name, "--preset", preset], env=env,
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{name}: the measuring process failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


# --- jnp forms of the programs, for jax.jit --------------------------------------------------
def _jax_programs() -> dict[str, Callable[[dict[str, Any]], Callable[[], Any]]]:
    """Each program written for ``jax.jit``: a function of the preset's parameters that
    returns a no-argument call running the whole program once (the arrays made inside, as the
    NumPy script makes them)."""
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)   # float64, as the NumPy programs

    def gray_scott(kw: dict[str, Any]) -> Callable[[], Any]:
        n, steps, iterations = kw["n"], kw["steps"], kw["iterations"]
        du, dv, feed, kill = 0.16, 0.08, 0.035, 0.065
        lo, hi = n // 2 - n // 8, n // 2 + n // 8 + 1

        @jax.jit
        def program() -> Any:
            u = jnp.ones((n + 2, n + 2)).at[lo:hi, lo:hi].set(0.5)
            v = jnp.zeros((n + 2, n + 2)).at[lo:hi, lo:hi].set(0.25)
            mean_v = 0.0
            for _ in range(iterations):
                for _ in range(steps):
                    uc, vc = u[1:-1, 1:-1], v[1:-1, 1:-1]
                    lap_u = u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4 * uc
                    lap_v = v[:-2, 1:-1] + v[2:, 1:-1] + v[1:-1, :-2] + v[1:-1, 2:] - 4 * vc
                    uvv = uc * vc * vc
                    u = u.at[1:-1, 1:-1].add(du * lap_u - uvv + feed * (1 - uc))
                    v = v.at[1:-1, 1:-1].add(dv * lap_v + uvv - (feed + kill) * vc)
                mean_v = v[1:-1, 1:-1].mean()
            return u, v, mean_v
        return program

    def wave_1d(kw: dict[str, Any]) -> Callable[[], Any]:
        n, steps, iterations = kw["n"], kw["steps"], kw["iterations"]
        c2 = 0.25

        @jax.jit
        def program() -> Any:
            x = jnp.linspace(0.0, 1.0, n)
            u_prev = jnp.exp(-200.0 * (x - 0.5) ** 2)
            u = u_prev
            energy = 0.0
            for _ in range(iterations):
                for _ in range(steps):
                    inner = 2.0 * u[1:-1] - u_prev[1:-1] + c2 * (u[2:] - 2.0 * u[1:-1] + u[:-2])
                    u_next = jnp.zeros_like(u).at[1:-1].set(inner)
                    u_prev, u = u, u_next
                energy = jnp.sum((u - u_prev) ** 2) + c2 * jnp.sum((u[1:] - u[:-1]) ** 2)
            return u, energy
        return program

    def heat_equation(kw: dict[str, Any]) -> Callable[[], Any]:
        n, iterations = kw["n"], kw["iterations"]

        @jax.jit
        def program() -> Any:
            grid = jnp.zeros((n + 2, n + 2))
            grid = grid.at[:, 0].set(-273.15).at[:, -1].set(-273.15).at[0, :].set(40.0).at[-1, :].set(-273.15)
            delta = 0.0
            for _ in range(iterations):
                center = grid[1:-1, 1:-1]
                work = 0.2 * (center + grid[:-2, 1:-1] + grid[1:-1, 2:] + grid[1:-1, :-2] + grid[2:, 1:-1])
                delta = jnp.sum(jnp.abs(work - center))
                grid = grid.at[1:-1, 1:-1].set(work)
            return grid, delta
        return program

    def softmax(kw: dict[str, Any]) -> Callable[[], Any]:
        import numpy as np

        x_host = np.random.default_rng(kw["seed"]).normal(0.0, 1.0, (kw["rows"], kw["cols"]))
        x = jnp.asarray(x_host)

        @jax.jit
        def body(x: Any) -> Any:
            e = jnp.exp(x - x.max(axis=1)[:, None])
            return e / e.sum(axis=1)[:, None]
        return lambda: body(x)

    return {"gray_scott": gray_scott, "wave_1d": wave_1d, "heat_equation": heat_equation, "softmax": softmax}


def _jax_child(name: str, preset: str) -> dict[str, Any]:
    try:
        import jax  # noqa: F401
    except ImportError:
        return {"jax": "not installed"}
    from fusionlab.workloads import ALL_WORKLOADS

    forms = _jax_programs()
    if name not in forms:
        return {"jax": "no jnp form written"}
    call = forms[name](ALL_WORKLOADS[name].presets[preset])
    t = time.perf_counter()
    _block(call())
    first = time.perf_counter() - t
    later = []
    for _ in range(3):
        t = time.perf_counter()
        _block(call())
        later.append(time.perf_counter() - t)
    run_s = statistics.median(later)
    return {"jax_first": first, "jax_run": run_s, "jax_compile": max(0.0, first - run_s)}


def _block(value: Any) -> None:
    import jax

    jax.block_until_ready(value)


def _jax_measure(name: str, preset: str) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(HERE.parent), "JAX_PLATFORMS": "cpu"}
    done = subprocess.run([sys.executable, __file__, "--jax-child", name, "--preset", preset], env=env,
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        return {"jax": f"failed: {done.stderr.strip().splitlines()[-1][:120] if done.stderr.strip() else done.returncode}"}
    return json.loads(done.stdout.strip().splitlines()[-1])


def table(rows: list[dict[str, Any]]) -> str:
    """The Markdown table of the measurements."""
    head = ("| program | cache | import s | capture s | plan s | compile s | first run s | run s | kernels (distinct) "
            "| jax.jit compile s | jax.jit run s |")
    lines = [head, "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        for state in ("cold", "warm"):
            m = r[state]
            jax_cells = ("", "") if state == "warm" else (
                (f"{r['jax']['jax_compile']:.2f}", f"{r['jax']['jax_run']:.3f}") if "jax_compile" in r["jax"]
                else (r["jax"]["jax"], ""))
            lines.append(
                f"| {r['name']} ({r['preset']}) | {state} | {m['import']:.2f} | {m['capture']:.2f} | {m['plan']:.2f} | "
                f"{m['compile']:.2f} | {m['first_run']:.2f} | {m['run']:.3f} | {m['kernels']} ({m['distinct']}) | "
                f"{jax_cells[0]} | {jax_cells[1]} |")
    return "\n".join(lines) + (
        "\n\nEach row is one fresh process on one temporary `FUSIONLAB_CACHE` (cold: empty; warm: what the cold "
        "process left). compile = first run - run (the median of three runs after it); greedy under Bohrium, "
        "the Python driver (`fusionlab run`'s default). jax.jit: first call minus the median of three later "
        "calls, in its own process (XLA on the CPU, float64).")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", help="a program of the table (repeatable)")
    parser.add_argument("--preset", help="one preset for every program (default: the table's)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--jax-child", help=argparse.SUPPRESS)
    parser.add_argument("--no-write", action="store_true", help="print the table, leave README.md as it is")
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_child(args.child, args.preset)))
        return
    if args.jax_child:
        print(json.dumps(_jax_child(args.jax_child, args.preset)))
        return
    rows = []
    for name, preset in PROGRAMS:
        if args.only and name not in args.only:
            continue
        preset = args.preset or preset
        with tempfile.TemporaryDirectory(prefix="fusionlab-cold-") as cache_dir:
            cold = _measure(name, preset, cache_dir)
            warm = _measure(name, preset, cache_dir)
        jax_row = _jax_measure(name, preset)
        rows.append({"name": name, "preset": preset, "cold": cold, "warm": warm, "jax": jax_row})
        print(f"{name}: cold compile {cold['compile']:.1f} s, warm {warm['compile']:.2f} s, "
              f"{cold['kernels']} kernels; jax {jax_row}", flush=True)
    text = table(rows)
    print(text if args.no_write else write_section("cold_start", text, "## Cold start (`bench_cold_start.py`)"))


if __name__ == "__main__":
    main()
