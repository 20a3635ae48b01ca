"""Which cost model predicts the clock? Every workload (and the realistic corpus) at two
sizes, partitioned by every algorithm under every cost model; each distinct partition run
and timed; every model's cost of it set beside the measured time.

Run ``.venv/bin/python benchmarks/bench_time_model.py`` (``--quick`` for a few workloads
at ``tiny``; ``--workloads a,b`` and ``--presets tiny,medium`` to choose). What it does:

1. per workload and preset, capture the program; partition every batch with each
   algorithm (singleton, linear, greedy, unintrusive, optimal with a node budget, ilp for
   the four models it formulates) under each cost model (bohrium, max_contract,
   max_locality, robinson, time); the distinct partitions are the union over all of them;
2. run each distinct partition with :func:`fusionlab.execute.run` (the Python driver,
   the default of ``run``, ``compare`` and the explorer's timing): a compiling run, then
   ``--repeat`` timed runs; the measured time is their median;
3. price every distinct partition with every model (summed over the batches). ``time``'s
   cost is its prediction in seconds. The paper's four count bytes, arrays, access pairs or
   a score: each gets one scale factor (seconds per unit, the geometric mean of measured /
   cost over all partitions with a positive cost), its prediction is scale × cost;
4. report per model the median relative error ``|predicted - measured| / measured``,
   Kendall's tau between predicted and measured over all partitions, and the mean tau
   within a program (does the model order one program's partitions as the clock does?).

Writes benchmarks/results/time_model.json and the "time model" section of
benchmarks/README.md. The machine's load average is recorded at the start and the end.
"""

from __future__ import annotations

import argparse
import contextlib
import faulthandler
import io
import json
import math
import os
import platform
import signal
import statistics
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import kendalltau

from fusionlab.budget import BudgetExceeded
from fusionlab.capture import capture
from fusionlab.costs import get_cost_model
from fusionlab.execute.runner import run
from fusionlab.execute.numba_backend import KernelCache
from fusionlab.partition import MergeCache, partition
from fusionlab.timemodel import TimeModel, cpu_model, load_figures, predict_seconds
from fusionlab.workloads import ALL_WORKLOADS, CORPUS, get_workload

from _report import write_section

HERE = Path(__file__).resolve().parent
MODELS = ["bohrium", "max_contract", "max_locality", "robinson", "time"]
ALGORITHMS = ["singleton", "linear", "greedy", "unintrusive", "optimal", "ilp"]
OPTIONS: dict[str, dict[str, Any]] = {"optimal": {"max_nodes": 1_000, "time_limit": 1.0}, "ilp": {"time_limit": 2.0}}
TARGET_ERROR, TARGET_TAU = 0.25, 0.8


def _load() -> float:
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return 0.0


def _partitions(batches: list[Any], cache: MergeCache, time_model: TimeModel) -> dict[tuple, list[str]]:
    """Distinct partitions (a tuple of blocks per batch) and who chose each ("greedy/time")."""
    out: dict[tuple, list[str]] = {}
    for model_name in MODELS:
        model = time_model if model_name == "time" else get_cost_model(model_name)
        for algorithm in ALGORITHMS:
            if algorithm == "ilp" and model_name == "time":
                continue   # the integer program formulates the paper's four models only
            key = []
            try:
                for b in batches:
                    r = partition(b, algorithm, model, cache=cache, **OPTIONS.get(algorithm, {}))
                    key.append(tuple(tuple(x) for x in r.blocks))
            except BudgetExceeded:   # the search's time limit ran out before it had a partition
                continue
            out.setdefault(tuple(key), []).append(f"{algorithm}/{model_name}")
    return out


def _measure(cap: Any, key: tuple, repeat: int, kernels: KernelCache) -> tuple[float, float, int]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        r = run(cap, partitions={k: [list(b) for b in blocks] for k, blocks in enumerate(key)},
                cache=kernels, repeat=repeat)
    return statistics.median(r.times), min(r.times), r.kernels


def _price(batches: list[Any], key: tuple, time_model: TimeModel) -> dict[str, float]:
    """Every model's cost of a partition, summed over the batches; for ``time`` its
    prediction of the run (:func:`fusionlab.timemodel.predict_seconds`: the cost plus the
    driver's fixed cost per run)."""
    out = {}
    for name in MODELS:
        if name == "time":
            out[name] = predict_seconds(batches, key, time_model.figures, time_model.min_size)
            continue
        model = get_cost_model(name)
        out[name] = float(sum(model.cost(b, [list(x) for x in blocks]) for b, blocks in zip(batches, key)))
    return out


def bench_program(name: str, preset: str, repeat: int, kernels: KernelCache, time_model: TimeModel,
                  reuse: dict[tuple, list[str]] | None = None) -> list[dict]:
    """The rows of one workload at one preset: one per distinct partition (``reuse``: the
    partitions of an earlier run, measured again instead of searched again)."""
    with contextlib.redirect_stdout(io.StringIO()):
        cap = capture(get_workload(name).script(preset))
    # its opaque calls priced by the seconds they took at capture (a matmul is not a map)
    time_model = TimeModel(time_model.figures, time_model.min_size, opaque_seconds=cap.externals.seconds)
    t = time.perf_counter()
    parts = reuse if reuse else _partitions(cap.batches, MergeCache(), time_model)
    partition_seconds = time.perf_counter() - t
    rows = []
    for key, chosen_by in parts.items():
        med, low, n_kernels = _measure(cap, key, repeat, kernels)
        parts_time = [b for prog, blocks in zip(cap.batches, key)
                      for b in time_model.block_times(prog, [list(x) for x in blocks])]
        bound = {k: sum(1 for b in parts_time if b.bound == k) for k in ("launch", "memory", "compute")}
        rows.append({
            "workload": name, "preset": preset, "corpus": name in CORPUS, "chosen_by": chosen_by,
            "instructions": sum(len(b) for b in cap.batches), "batches": len(cap.batches),
            "blocks": sum(len(k) for k in key), "kernels": n_kernels,
            "measured_seconds": med, "min_seconds": low, "costs": _price(cap.batches, key, time_model),
            "bound_blocks": bound, "partition_seconds": round(partition_seconds, 3),
            "partition": [[list(b) for b in blocks] for blocks in key],
        })
    return rows


def _scale(rows: list[dict], model: str) -> float:
    ratios = [r["measured_seconds"] / r["costs"][model] for r in rows if r["costs"][model] > 0]
    return math.exp(statistics.fmean(math.log(x) for x in ratios)) if ratios else 0.0


def summarise(rows: list[dict]) -> dict[str, dict[str, Any]]:
    """Per model: its scale, the median relative error, Kendall's tau over all partitions
    and its mean within programs."""
    out: dict[str, dict[str, Any]] = {}
    measured = np.array([r["measured_seconds"] for r in rows])
    for model in MODELS:
        scale = 1.0 if model == "time" else _scale(rows, model)
        pred = np.array([scale * r["costs"][model] for r in rows])
        err = np.abs(pred - measured) / measured
        tau = kendalltau(pred, measured).statistic if len(rows) > 1 else float("nan")
        within = []
        by_prog: dict[tuple[str, str], list[int]] = {}
        for i, r in enumerate(rows):
            by_prog.setdefault((r["workload"], r["preset"]), []).append(i)
        for idx in by_prog.values():
            if len(idx) >= 3:
                t = kendalltau(pred[idx], measured[idx]).statistic
                if not math.isnan(t):
                    within.append(t)
        out[model] = {
            "scale_seconds_per_unit": scale, "median_error": float(np.median(err)),
            "error_quartiles": [float(np.quantile(err, 0.25)), float(np.quantile(err, 0.75))],
            "kendall_tau": float(tau), "mean_tau_within_program": float(np.mean(within)) if within else None,
            "programs_with_3_or_more_partitions": len(within), "partitions": len(rows),
        }
    return out


def _per_preset(rows: list[dict]) -> dict[str, dict[str, dict[str, Any]]]:
    return {p: summarise([r for r in rows if r["preset"] == p]) for p in sorted({r["preset"] for r in rows})}


def _worst(rows: list[dict], n: int = 8) -> list[dict]:
    """The time model's largest misses, one per program."""
    best: dict[tuple[str, str], dict] = {}
    for r in rows:
        e = (r["costs"]["time"] - r["measured_seconds"]) / r["measured_seconds"]
        k = (r["workload"], r["preset"])
        if k not in best or abs(e) > abs(best[k]["error"]):
            best[k] = {"workload": r["workload"], "preset": r["preset"], "error": e,
                       "predicted_ms": r["costs"]["time"] * 1e3, "measured_ms": r["measured_seconds"] * 1e3,
                       "kernels": r["kernels"], "bound_blocks": r["bound_blocks"], "chosen_by": r["chosen_by"][:3]}
    return sorted(best.values(), key=lambda x: -abs(x["error"]))[:n]


def report(data: dict[str, Any]) -> str:
    s, meta = data["summary"], data["meta"]
    lines = [
        f"Measured {meta['date']} on {meta['cpu']}, {meta['cores']} cores, Python {meta['python']}; "
        f"`bench_time_model.py` ran {meta['seconds'] / 60:.1f} minutes; load average {meta['load_start']} at the "
        f"start, {meta['load_end']} at the end (the machine was {'shared' if max(meta['load_start'], meta['load_end']) > 1 else 'quiet'}). "
        f"{meta['programs']} programs ({meta['workloads']} workloads × presets {', '.join(meta['presets'])}), "
        f"{meta['partitions']} distinct partitions, each run {meta['repeat']} times after a compiling run "
        f"(Python driver; median). The time model's figures: {meta['figures']}.",
        "",
        "| cost model | unit | seconds per unit (fitted) | median error | error quartiles | Kendall's tau | mean tau within a program |",
        "| --- | --- | ---: | ---: | --- | ---: | ---: |",
    ]
    units = {"bohrium": "bytes", "max_contract": "arrays", "max_locality": "access pairs", "robinson": "score",
             "time": "seconds"}
    for m in MODELS:
        x = s[m]
        scale = "1 (none)" if m == "time" else f"{x['scale_seconds_per_unit']:.3g}"
        within = "" if x["mean_tau_within_program"] is None else f"{x['mean_tau_within_program']:.2f}"
        name = f"**{m}**" if m == "time" else m
        lines.append(f"| {name} | {units[m]} | {scale} | {x['median_error']:.0%} | "
                     f"{x['error_quartiles'][0]:.0%}-{x['error_quartiles'][1]:.0%} | {x['kendall_tau']:.2f} | {within} |")
    t = s["time"]
    met_e, met_t = t["median_error"] <= TARGET_ERROR, t["kendall_tau"] >= TARGET_TAU
    lines += ["", f"Targets for `time`: median error within {TARGET_ERROR:.0%} — "
              f"**{'met' if met_e else 'missed'}** ({t['median_error']:.0%}); Kendall's tau at least {TARGET_TAU} — "
              f"**{'met' if met_t else 'missed'}** ({t['kendall_tau']:.2f}).", "",
              "Per preset (median error / tau):", "",
              "| preset | " + " | ".join(MODELS) + " |", "| --- |" + " ---: |" * len(MODELS)]
    for p, sp in data["per_preset"].items():
        lines.append(f"| {p} | " + " | ".join(f"{sp[m]['median_error']:.0%} / {sp[m]['kendall_tau']:.2f}"
                                              for m in MODELS) + " |")
    lines += ["", "The time model's largest misses (one row per program; error = predicted / measured - 1):", "",
              "| workload | preset | predicted ms | measured ms | error | kernels | blocks bound by launch / memory / compute |",
              "| --- | --- | ---: | ---: | ---: | ---: | --- |"]
    for w in data["worst"]:
        b = w["bound_blocks"]
        lines.append(f"| {w['workload']} | {w['preset']} | {w['predicted_ms']:.3f} | {w['measured_ms']:.3f} | "
                     f"{w['error']:+.0%} | {w['kernels']} | {b['launch']} / {b['memory']} / {b['compute']} |")
    lines += ["", "Where `time` misses, and why (from the model's block-by-block breakdown, "
              "`fusionlab.timemodel.explain`):", "",
              "- **Opaque NumPy calls** (matrix products, `np.cov`, sorting, Python loops over rows in LU and "
              "Gauss elimination): the model prices an opaque instruction as element-wise arithmetic over its "
              "output, far below a matrix product's work; such programs are under-predicted by up to 100x. A "
              "per-function throughput (FLOPs of `matmul`, `sort`) would fix it; it is not calibrated yet.",
              "- **Programs NumPy runs block by block** (no driver could be built: 0 kernels) pay Python's "
              "per-instruction dispatch, which the model prices as a kernel launch.",
              "- **Medium programs on a shared machine**: a parallel kernel waits for the core another process "
              "holds (whole time slices); the calibration's parallel figures come from quiet moments, so "
              "measured times above the load's own noise are under-predicted. The load average is recorded "
              "above; the per-preset table shows tiny (launch-bound, little affected) against medium.",
              "- **Rosenbrock, medium**: over-predicted: Numba fuses the sum's arithmetic into a vectorised "
              "loop faster than the per-family figures add up to."]
    if meta.get("note"):
        lines += ["", f"Note: {meta['note']}."]
    if meta.get("skipped"):
        lines += ["", f"Not measured (the run's `--minutes` budget ran out first): {', '.join(meta['skipped'])}."]
    return "\n".join(lines)


def _order(names: list[str], presets: list[str]) -> list[tuple[str, str]]:
    """Programs in the order run: each workload at every preset, the workloads in the order
    given — by default the smaller programs (fewer instructions at the first preset) first —
    so that a run cut by ``--minutes`` still has both sizes of the workloads it covered."""
    return [(n, p) for n in names for p in presets if p in get_workload(n).presets]


def _by_size(names: list[str], preset: str) -> list[str]:
    sizes = {}
    for n in names:
        with contextlib.redirect_stdout(io.StringIO()):
            sizes[n] = sum(len(b) for b in capture(get_workload(n).script(preset)).batches)
    return sorted(names, key=lambda n: (sizes[n], n))


def main(argv: list[str] | None = None) -> int:
    faulthandler.register(signal.SIGUSR1)   # kill -USR1 <pid>: where a long run is
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workloads", default="", help="comma-separated names (default: every workload and the corpus)")
    ap.add_argument("--presets", default="tiny,medium")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="four workloads at tiny, 3 repeats; no README update")
    ap.add_argument("--out", default=str(HERE / "results" / "time_model.json"))
    ap.add_argument("--no-readme", action="store_true")
    ap.add_argument("--minutes", type=float, default=0.0,
                    help="start no new program after this many minutes (0: no limit); results are written after each")
    ap.add_argument("--reuse", default="",
                    help="a results file of an earlier run: its programs' partitions are measured again, not searched")
    ap.add_argument("--report-only", action="store_true",
                    help="rebuild the README section from the results file (--out) without measuring")
    args = ap.parse_args(argv)
    if args.report_only:
        data = json.loads(Path(args.out).read_text())
        text = report(data)
        print(text)
        if not args.no_readme:
            write_section("bench_time_model", text, "## Which cost model predicts the clock? (`bench_time_model.py`)")
        return 0
    names = [n for n in args.workloads.split(",") if n] or list(ALL_WORKLOADS)
    presets = [p for p in args.presets.split(",") if p]
    if args.quick:
        names, presets, args.repeat = names[:4] if args.workloads else ["black_scholes", "heat_equation",
                                                                       "shallow_water", "softmax"], ["tiny"], 3
    started, load_start = time.perf_counter(), _load()
    if not args.workloads:
        names = _by_size(names, presets[0])
    reused: dict[tuple[str, str], dict[tuple, list[str]]] = {}
    if args.reuse:
        for r in json.loads(Path(args.reuse).read_text())["rows"]:
            key = tuple(tuple(tuple(b) for b in blocks) for blocks in r["partition"])
            reused.setdefault((r["workload"], r["preset"]), {})[key] = r["chosen_by"]
    figures = load_figures()
    time_model = TimeModel(figures)
    kernels = KernelCache()
    rows: list[dict] = []
    skipped: list[str] = []
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    data: dict[str, Any] = {}
    for name, preset in _order(names, presets):
        if args.minutes and time.perf_counter() - started > 60 * args.minutes:
            skipped.append(f"{name}/{preset}")
            continue
        t = time.perf_counter()
        got = bench_program(name, preset, args.repeat, kernels, time_model, reused.get((name, preset)))
        rows += got
        print(f"{name:<26}{preset:<8}{len(got):>3} partitions {time.perf_counter() - t:7.1f} s", file=sys.stderr)
        data = {
            "meta": {
                "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                "cpu": cpu_model(),
                "cores": os.cpu_count(), "python": platform.python_version(),
                "seconds": time.perf_counter() - started, "load_start": load_start, "load_end": _load(),
                "workloads": len({r["workload"] for r in rows}), "presets": presets,
                "programs": len({(r["workload"], r["preset"]) for r in rows}),
                "partitions": len(rows), "repeat": args.repeat, "figures": figures.label,
                "algorithms": ALGORITHMS, "models": MODELS, "options": OPTIONS, "skipped": skipped,
            },
            "summary": summarise(rows), "per_preset": _per_preset(rows), "worst": _worst(rows), "rows": rows,
        }
        out.write_text(json.dumps(data, indent=1) + "\n")   # after each program: a run cut short keeps its figures
    data["meta"]["skipped"] = skipped
    out.write_text(json.dumps(data, indent=1) + "\n")
    text = report(data)
    print(text)
    if not (args.quick or args.no_readme):
        write_section("bench_time_model", text, "## Which cost model predicts the clock? (`bench_time_model.py`)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
