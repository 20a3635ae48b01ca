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
    out["kernels"], out["distinct"] = len(kernels), len({k.key for k in kernels})   # the cache compiles one per key
    cache = KernelCache()
    t = time.perf_counter()
    result = run(cap, plans=built.plans, cache=cache, repeat=3)
    out["first_run"] = result.seconds
    out["run"] = statistics.median(result.times)
    out["compile"] = max(0.0, out["first_run"] - out["run"])
    out["wall"] = time.perf_counter() - t
    out["driver"] = result.driver
    out["numba"] = numba_stages(cache.kernels.values())
    return out


#: Numba's compiler passes grouped as the table reports them (pass names as Numba records them
#: in a dispatcher's ``get_metadata(signature)["pipeline_times"]``)
STAGES = (("parfor lowering", ("native_parfor_lowering",)),   # the parallel loop's gufunc: LLVM included
          ("lowering", ("native_lowering",)),                  # LLVM IR and its optimisation, serial code
          ("type inference", ("nopython_type_inference",)),
          ("parfor passes", ("parfor_pass", "parfor_fusion_pass", "parfor_prelowering_pass")))


def numba_stages(dispatchers: Any) -> dict[str, float]:
    """Seconds Numba spent per stage compiling ``dispatchers`` (nothing for code loaded from
    Numba's cache: it records no pipeline times)."""
    totals = {name: 0.0 for name, _ in STAGES} | {"other": 0.0}
    for d in dispatchers:
        for sig in getattr(d, "signatures", ()):
            for passes in (d.get_metadata(sig) or {}).get("pipeline_times", {}).values():   # None when loaded
                for name, rec in passes.items():
                    bare = name.split("_", 1)[1] if name[:1].isdigit() else name
                    stage = next((st for st, names in STAGES if bare in names), "other")
                    totals[stage] += rec.init + rec.run + rec.finalize
    return totals


def _measure(name: str, preset: str, cache_dir: str, numba_opt: int | None = None) -> dict[str, Any]:
    env = {**os.environ, "FUSIONLAB_CACHE": cache_dir, "PYTHONPATH": str(HERE.parent)}
    if numba_opt is not None:   # LLVM's optimisation level for Numba (its default: 3)
        env["NUMBA_OPT"] = str(numba_opt)
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
    import numpy as np

    jax.config.update("jax_enable_x64", True)   # float64, as the NumPy programs

    # A step is jitted and called from a Python loop, as a user writes it; the initial arrays
    # are arguments made outside the jit (inside, XLA would fold the whole constant program
    # at compile time and "run" in microseconds).
    def gray_scott(kw: dict[str, Any]) -> Callable[[], Any]:
        n, steps, iterations = kw["n"], kw["steps"], kw["iterations"]
        du, dv, feed, kill = 0.16, 0.08, 0.035, 0.065
        lo, hi = n // 2 - n // 8, n // 2 + n // 8 + 1
        u0 = np.ones((n + 2, n + 2))
        v0 = np.zeros((n + 2, n + 2))
        u0[lo:hi, lo:hi], v0[lo:hi, lo:hi] = 0.5, 0.25

        @jax.jit
        def step(u: Any, v: Any) -> Any:
            uc, vc = u[1:-1, 1:-1], v[1:-1, 1:-1]
            lap_u = u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4 * uc
            lap_v = v[:-2, 1:-1] + v[2:, 1:-1] + v[1:-1, :-2] + v[1:-1, 2:] - 4 * vc
            uvv = uc * vc * vc
            return (u.at[1:-1, 1:-1].add(du * lap_u - uvv + feed * (1 - uc)),
                    v.at[1:-1, 1:-1].add(dv * lap_v + uvv - (feed + kill) * vc))

        def program() -> Any:
            u, v = jnp.asarray(u0), jnp.asarray(v0)
            mean_v = 0.0
            for _ in range(iterations):
                for _ in range(steps):
                    u, v = step(u, v)
                mean_v = float(v[1:-1, 1:-1].mean())
            return u, v, mean_v
        return program

    def wave_1d(kw: dict[str, Any]) -> Callable[[], Any]:
        n, steps, iterations = kw["n"], kw["steps"], kw["iterations"]
        c2 = 0.25
        x = np.linspace(0.0, 1.0, n)
        start = np.exp(-200.0 * (x - 0.5) ** 2)

        @jax.jit
        def step(u: Any, u_prev: Any) -> Any:
            inner = 2.0 * u[1:-1] - u_prev[1:-1] + c2 * (u[2:] - 2.0 * u[1:-1] + u[:-2])
            return jnp.zeros_like(u).at[1:-1].set(inner), u

        @jax.jit
        def energy_of(u: Any, u_prev: Any) -> Any:
            return jnp.sum((u - u_prev) ** 2) + c2 * jnp.sum((u[1:] - u[:-1]) ** 2)

        def program() -> Any:
            u_prev = jnp.asarray(start)
            u, energy = u_prev, 0.0
            for _ in range(iterations):
                for _ in range(steps):
                    u, u_prev = step(u, u_prev)
                energy = float(energy_of(u, u_prev))
            return u, energy
        return program

    def heat_equation(kw: dict[str, Any]) -> Callable[[], Any]:
        n, iterations = kw["n"], kw["iterations"]
        grid0 = np.zeros((n + 2, n + 2))
        grid0[:, 0], grid0[:, -1], grid0[0, :], grid0[-1, :] = -273.15, -273.15, 40.0, -273.15

        @jax.jit
        def sweep(grid: Any) -> Any:
            center = grid[1:-1, 1:-1]
            work = 0.2 * (center + grid[:-2, 1:-1] + grid[1:-1, 2:] + grid[1:-1, :-2] + grid[2:, 1:-1])
            return grid.at[1:-1, 1:-1].set(work), jnp.sum(jnp.abs(work - center))

        def program() -> Any:
            grid, delta = jnp.asarray(grid0), 0.0
            for _ in range(iterations):
                grid, diff = sweep(grid)
                delta = float(diff)
            return grid, delta
        return program

    def black_scholes(kw: dict[str, Any]) -> Callable[[], Any]:
        n, iterations = kw["n"], kw["iterations"]
        s0 = np.random.default_rng(kw["seed"]).uniform(4.0, 30.0, n)
        strike, rate, volatility = 20.0, 0.08, 0.30

        def cnd(x: Any) -> Any:
            a1, a2, a3, a4, a5 = 0.31938153, -0.356563782, 1.781477937, -1.821255978, 1.330274429
            ax = jnp.abs(x)
            k = 1.0 / (1.0 + 0.2316419 * ax)
            poly = a1 * k + a2 * k**2 + a3 * k**3 + a4 * k**4 + a5 * k**5
            w = 1.0 - 1.0 / np.sqrt(2.0 * np.pi) * jnp.exp(-ax * ax / 2.0) * poly
            mask = x < 0
            return w * (1 - mask) + (1.0 - w) * mask

        @jax.jit
        def price(s: Any, t: Any) -> Any:
            d1 = (jnp.log(s / strike) + (rate + volatility * volatility / 2.0) * t) / (volatility * jnp.sqrt(t))
            d2 = d1 - volatility * jnp.sqrt(t)
            call = s * cnd(d1) - strike * jnp.exp(-rate * t) * cnd(d2)
            return call, jnp.sum(call)

        def program() -> Any:
            s, t, total, call = jnp.asarray(s0), 1.0 / 365.0, 0.0, None
            for _ in range(iterations):
                call, summed = price(s, t)
                total += float(summed) / n
                t += 1.0 / 365.0
            return call, total / max(iterations, 1)
        return program

    def jacobi_poisson(kw: dict[str, Any]) -> Callable[[], Any]:
        n, sweeps, iterations = kw["n"], kw["sweeps"], kw["iterations"]
        h2 = (1.0 / (n - 1)) ** 2
        x = np.linspace(0.0, 1.0, n)
        f = np.sin(np.pi * x)[:, None] * np.sin(np.pi * x)[None, :]
        u0 = np.zeros((n, n))
        u0[[0, -1], :] = 1.0
        u0[:, [0, -1]] = 0.0

        @jax.jit
        def sweep(u: Any, f: Any) -> Any:
            inner = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] + h2 * f[1:-1, 1:-1])
            return u.at[1:-1, 1:-1].set(inner).at[jnp.array([0, -1]), :].set(1.0).at[:, jnp.array([0, -1])].set(0.0)

        @jax.jit
        def residual_of(u: Any, f: Any) -> Any:
            r = (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4.0 * u[1:-1, 1:-1]) / h2 + f[1:-1, 1:-1]
            return jnp.sqrt(jnp.mean(r ** 2))

        def program() -> Any:
            u, fj, residual = jnp.asarray(u0), jnp.asarray(f), 0.0
            for _ in range(iterations):
                for _ in range(sweeps):
                    u = sweep(u, fj)
                residual = float(residual_of(u, fj))
            return u, residual
        return program

    def softmax(kw: dict[str, Any]) -> Callable[[], Any]:
        x_host = np.random.default_rng(kw["seed"]).normal(0.0, 1.0, (kw["rows"], kw["cols"]))
        x = jnp.asarray(x_host)

        @jax.jit
        def body(x: Any) -> Any:
            e = jnp.exp(x - x.max(axis=1)[:, None])
            return e / e.sum(axis=1)[:, None]
        return lambda: body(x)

    return {"gray_scott": gray_scott, "wave_1d": wave_1d, "heat_equation": heat_equation, "softmax": softmax,
            "black_scholes": black_scholes, "jacobi_poisson": jacobi_poisson}


#: why a program of the table has no jnp form
NO_JAX = {
    "kmeans_step": "no jnp form: each centroid is the mean of a boolean selection (points[labels == j]), "
                   "a data-dependent shape jax.jit cannot trace; a jnp form would be another program "
                   "(a one-hot product)",
}


def _jax_child(name: str, preset: str) -> dict[str, Any]:
    try:
        import jax  # noqa: F401
    except ImportError:
        return {"jax": "not installed"}
    from fusionlab.workloads import ALL_WORKLOADS

    forms = _jax_programs()
    if name not in forms:
        return {"jax": NO_JAX.get(name, "no jnp form written")}
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
    lines += ["", "Where the cold compile goes (seconds Numba records per stage, summed over the kernels):", "",
              "| program | " + " | ".join(name for name, _ in STAGES) + " | other |",
              "| --- |" + " ---: |" * (len(STAGES) + 1)]
    for r in rows:
        st = r["cold"]["numba"]
        lines.append(f"| {r['name']} | " + " | ".join(f"{st[name]:.2f}" for name, _ in STAGES) + f" | {st['other']:.2f} |")
    return "\n".join(lines) + (
        "\n\nEach row is one fresh process on one temporary `FUSIONLAB_CACHE` (cold: empty; warm: what the cold "
        "process left). compile = first run - run (the median of three runs after it); greedy under Bohrium, "
        "the Python driver (`fusionlab run`'s default). jax.jit: first call minus the median of three later "
        "calls, in its own process (XLA on the CPU, float64).")


def _opt_levels(args: argparse.Namespace, levels: list[int]) -> None:
    """A cold compile at each of Numba's LLVM optimisation levels, and the run it gives."""
    lines = ["| program | NUMBA_OPT | compile s | parfor lowering s | run s (median of 3) |",
             "| --- | ---: | ---: | ---: | ---: |"]
    for name, preset in PROGRAMS:
        if (args.only and name not in args.only) or (not args.only and name not in ("gray_scott", "heat_equation")):
            continue
        preset = args.preset or preset
        for level in levels:
            with tempfile.TemporaryDirectory(prefix="fusionlab-cold-") as cache_dir:
                m = _measure(name, preset, cache_dir, level)
            lines.append(f"| {name} ({preset}) | {level} | {m['compile']:.2f} | {m['numba']['parfor lowering']:.2f} | "
                         f"{m['run']:.3f} |")
            print(lines[-1], flush=True)
    text = "\n".join(lines) + ("\n\nEach row a fresh process on an empty cache, as the cold rows above; "
                               "Numba's default level is 3.")
    print(text if args.no_write else write_section("cold_start_opt", text, "### A cheaper LLVM level for a first run?"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", help="a program of the table (repeatable)")
    parser.add_argument("--preset", help="one preset for every program (default: the table's)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--jax-child", help=argparse.SUPPRESS)
    parser.add_argument("--numba-opt", help="LLVM levels to compare on a cold cache, e.g. 0,1,3 (a candidate cut: "
                        "a cheaper optimisation for a first run); writes section cold_start_opt")
    parser.add_argument("--no-write", action="store_true", help="print the table, leave README.md as it is")
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_child(args.child, args.preset)))
        return
    if args.jax_child:
        print(json.dumps(_jax_child(args.jax_child, args.preset)))
        return
    if args.numba_opt:
        _opt_levels(args, [int(x) for x in args.numba_opt.split(",")])
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
