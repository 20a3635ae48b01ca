"""Fused execution against NumPy: workloads, hand-written loops, and the cost models (Fig. 18-20).

Run ``make bench`` (or ``.venv/bin/python benchmarks/bench_backend.py [--preset medium]``).
Every ratio is measured in this one process against NumPy eager run just before it; medians
of repeated runs after a warm-up run that compiles. Writes its tables into
benchmarks/README.md and a PNG of the cost-model comparison into benchmarks/results/.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import time
from pathlib import Path

import numba
import numpy as np

from fusionlab.capture import capture
from fusionlab.execute.numba_backend import KernelCache
from fusionlab.execute.run import compare
from fusionlab.workloads import WORKLOADS

from _report import median_seconds, write_section

HERE = Path(__file__).resolve().parent
WORKLOAD_NAMES = ["black_scholes", "heat_equation", "leibnitz_pi", "rosenbrock", "monte_carlo_pi",
                  "shallow_water", "sor", "stencil_27pt"]


# --- reference points: NumPy code under Numba, and hand-written fused loops --------------


@numba.njit(parallel=True)
def _rosenbrock_numba_numpy(x):  # type: ignore[no-untyped-def]
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


@numba.njit(parallel=True, fastmath={"reassoc"})
def _rosenbrock_loop(x):  # type: ignore[no-untyped-def]
    s = 0.0
    for i in numba.prange(x.shape[0] - 1):
        a = x[i + 1] - x[i] * x[i]
        b = 1.0 - x[i]
        s += 100.0 * a * a + b * b
    return s


@numba.njit(parallel=True)
def _leibniz_numba_numpy(n):  # type: ignore[no-untyped-def]
    k = np.arange(n).astype(np.float64)
    return np.sum(1.0 / (4.0 * k + 1.0) - 1.0 / (4.0 * k + 3.0))


@numba.njit(parallel=True, fastmath={"reassoc"})
def _leibniz_loop(n):  # type: ignore[no-untyped-def]
    s = 0.0
    for i in numba.prange(n):
        k = float(i)
        s += 1.0 / (4.0 * k + 1.0) - 1.0 / (4.0 * k + 3.0)
    return s


@numba.njit(parallel=True)
def _triad(a, b, c, s):  # type: ignore[no-untyped-def]
    for i in numba.prange(a.shape[0]):
        a[i] = b[i] + s * c[i]


def reference_points() -> list[str]:
    rows = []
    n = 10_000_000
    rng = np.random.default_rng(0)
    x = rng.random(n)
    np_t = median_seconds(repeat=7, fn=lambda: np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2))
    nn_t = median_seconds(repeat=7, fn=lambda: _rosenbrock_numba_numpy(x))
    loop_t = median_seconds(repeat=7, fn=lambda: _rosenbrock_loop(x))
    rows.append(f"| Rosenbrock sum, 1e7 | {np_t * 1e3:.1f} | {nn_t * 1e3:.1f} ({np_t / nn_t:.1f}x) | "
                f"{loop_t * 1e3:.1f} ({np_t / loop_t:.1f}x) |")
    k = np.arange(n, dtype=np.float64)
    np_t = median_seconds(repeat=7, fn=lambda: np.sum(1.0 / (4.0 * k + 1.0) - 1.0 / (4.0 * k + 3.0)))
    nn_t = median_seconds(repeat=7, fn=lambda: _leibniz_numba_numpy(n))
    loop_t = median_seconds(repeat=7, fn=lambda: _leibniz_loop(n))
    rows.append(f"| Leibniz pi, 1e7 terms | {np_t * 1e3:.1f} | {nn_t * 1e3:.1f} ({np_t / nn_t:.1f}x) | "
                f"{loop_t * 1e3:.1f} ({np_t / loop_t:.1f}x) |")
    m = 20_000_000
    a, b, c = np.empty(m), rng.random(m), rng.random(m)
    np_t = median_seconds(repeat=7, fn=lambda: np.add(b, 3.0 * c, out=a))
    loop_t = median_seconds(repeat=7, fn=lambda: _triad(a, b, c, 3.0))
    gbs = 3 * m * 8 / loop_t / 1e9
    rows.append(f"| STREAM triad, 2e7 | {np_t * 1e3:.1f} | | {loop_t * 1e3:.1f} ({np_t / loop_t:.1f}x, {gbs:.1f} GB/s) |")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--preset", default="medium")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    cache = KernelCache()
    out_rows, model_rows, data = [], [], {}
    for name in WORKLOAD_NAMES:
        with contextlib.redirect_stdout(io.StringIO()):
            cap = capture(WORKLOADS[name].script(args.preset), {})
        records = compare(cap, ["linear", "greedy", "optimal"],
                          ["bohrium", "max_contract", "max_locality", "robinson"],
                          repeat=args.repeat, cache=cache)
        numpy_row = records[0]
        greedy = next(r for r in records if (r.cost_model, r.algorithm) == ("bohrium", "greedy"))
        out_rows.append(
            f"| {WORKLOADS[name].title} | {numpy_row.median_seconds * 1e3:.1f} | {greedy.median_seconds * 1e3:.1f} | "
            f"{greedy.speedup:.2f}x | {greedy.kernels} | {greedy.compile_seconds:.2f} | {greedy.max_abs_error:.1e} |"
        )
        data[name] = [r.to_dict() for r in records]
        for alg in ("linear", "greedy", "optimal"):
            cells = [f"{r.median_seconds * 1e3:.1f}" for m in ("bohrium", "max_contract", "max_locality", "robinson")
                     for r in records if (r.cost_model, r.algorithm) == (m, alg)]
            model_rows.append(f"| {WORKLOADS[name].title} | {alg} | {numpy_row.median_seconds * 1e3:.1f} | "
                              + " | ".join(cells) + " |")
    results = HERE / "results"
    results.mkdir(exist_ok=True)
    (results / "backend.json").write_text(json.dumps(data, indent=1))
    _plot(data, results / "cost_models.png")
    body = "\n".join([
        f"Measured {time.strftime('%Y-%m-%d')}, preset `{args.preset}`, medians of {args.repeat} runs after a "
        "compiling warm-up; blocks under 4096 elements run with NumPy (`docs/backend.md`).",
        "",
        "### Workloads: NumPy eager against fusionlab (greedy, Bohrium model)",
        "",
        "| workload | NumPy ms | fusionlab ms | speed-up | kernels | compile s | max abs error |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
        *out_rows,
        "",
        "### Time per cost model (ms) under linear, greedy and optimal: the paper's Fig. 18-20",
        "",
        "`results/cost_models.png` draws the same numbers.",
        "",
        "| workload | algorithm | NumPy | bohrium | max_contract | max_locality | robinson |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
        *model_rows,
        "",
        "### Reference points (ms; speed-up over NumPy)",
        "",
        "| kernel | NumPy | Numba `parallel=True` on the NumPy code | hand-written fused prange loop |",
        "| --- | ---: | ---: | ---: |",
        *reference_points(),
    ])
    print(write_section("bench_backend", body, "## Fused execution (`bench_backend.py`)"))


def _plot(data: dict, path: Path) -> None:  # type: ignore[type-arg]
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    models = ["bohrium", "max_contract", "max_locality", "robinson"]
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.5), sharey=True)
    names = list(data)
    for ax, alg in zip(axes, ("linear", "greedy", "optimal")):
        width = 0.8 / len(models)
        for j, m in enumerate(models):
            ratios = []
            for n in names:
                base = data[n][0]["median_seconds"]
                row = next(r for r in data[n] if r["cost_model"] == m and r["algorithm"] == alg)
                ratios.append(row["median_seconds"] / base)
            ax.bar(np.arange(len(names)) + j * width, ratios, width, label=m)
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_title(f"{alg} (time relative to NumPy eager)")
        ax.set_xticks(np.arange(len(names)) + 0.4, [n.replace("_", " ") for n in names], rotation=45, ha="right")
    axes[0].set_ylabel("fused time / NumPy time")
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    main()
