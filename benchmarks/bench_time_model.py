"""Which cost model predicts the clock? Every workload (and the realistic corpus) at two
sizes, partitioned by every algorithm under every cost model; each distinct partition run
and timed; every model's cost of it set beside the measured time.

Run ``.venv/bin/python benchmarks/bench_time_model.py`` (``--quick`` for a few workloads
at ``tiny``; ``--workloads a,b`` and ``--presets tiny,medium`` to choose). What it does:

1. per workload and preset, capture the program; partition every batch with each
   algorithm (singleton, linear, greedy, unintrusive, optimal with a node budget, ilp for
   the four models it formulates) under each cost model (bohrium, max_contract,
   max_locality, robinson, time); the distinct partitions are the union over all of them;
2. run each partition with distinct kernels (partitions that differ only in where DEL
   and SYNC go are one) with :func:`fusionlab.pipeline.run` (the Python driver, the default
   of ``run``, ``compare`` and the explorer's timing): a compiling run, then up to
   ``--repeat`` timed runs; the measured time is their median. With ``--minutes``, every
   program gets an equal share of the time left, its partitions are run in
   :data:`PRIORITY` order, and each gets as many timed runs as its share allows (at least
   one); a partition predicted far slower than the program's fastest is not run (the
   report lists what was left out and why);
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

from fusionlab.support.budget import BudgetExceeded
from fusionlab.ir.bytecode import Opcode
from fusionlab.tools.calibrate import calibrate
from fusionlab.capture import capture
from fusionlab.costs import get_cost_model
from fusionlab.pipeline.runner import run
from fusionlab.backend.numba.plan import KernelCache
from fusionlab.partition import MergeCache, partition
from fusionlab.costs.timemodel import TimeModel, cpu_model, load_figures, predict_seconds, runs_block_by_block
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


#: algorithms in the order their partitions are measured when a program's share of the
#: budget may not cover all: the time model's own choices first, singletons (the most
#: kernels to compile, the slowest runs) last
PRIORITY = ["greedy/time", "optimal/time", "linear/time", "greedy", "optimal", "ilp", "linear", "unintrusive",
            "singleton"]
#: a partition predicted this many times slower than the program's fastest prediction, and
#: over SLOW_SECONDS a run, is not run (its row says so): a run of singletons at medium
#: compiles and runs hundreds of kernels to confirm what the others already show
SLOW_FACTOR, SLOW_SECONDS = 30.0, 0.5


def _kernel_key(batches: list[Any], key: tuple) -> tuple:
    """What a run of the partition executes: per batch, its blocks without their SYNCs
    (two partitions that differ only in where SYNC goes run the same kernels)."""
    out = []
    for prog, blocks in zip(batches, key):
        # DELs stay: a DEL beside its array's last use contracts it (a different kernel)
        computing = [tuple(sorted(i for i in b if prog[i].opcode is not Opcode.SYNC)) for b in blocks]
        out.append(tuple(sorted(c for c in computing if c)))
    return tuple(out)


def _dedupe(batches: list[Any], parts: dict[tuple, list[str]]) -> dict[tuple, list[str]]:
    """One partition per distinct set of kernels (the first found), with everyone who chose any.

    >>> from fusionlab import parse
    >>> p = parse("ARRAY A float64[4]\\nRANGE A\\nADD A, A, 1\\nSYNC A")
    >>> _dedupe([p], {(((0, 1), (2,)),): ["greedy/time"], (((0,), (1,), (2,)),): ["singleton/time"],
    ...               (((0, 1, 2),),): ["linear/time"]})
    {(((0, 1), (2,)),): ['greedy/time', 'linear/time'], (((0,), (1,), (2,)),): ['singleton/time']}
    """
    first: dict[tuple, tuple] = {}
    out: dict[tuple, list[str]] = {}
    for key, chosen_by in parts.items():
        k = _kernel_key(batches, key)
        rep = first.setdefault(k, key)
        out.setdefault(rep, []).extend(chosen_by)
    return out


def _rank(chosen_by: list[str]) -> int:
    best = len(PRIORITY)
    for who in chosen_by:
        for k, p in enumerate(PRIORITY):
            if who == p or who.split("/")[0] == p:
                best = min(best, k)
    return best


def _measure(cap: Any, key: tuple, repeat: int, kernels: KernelCache, until: float) -> tuple[float, float, int, int]:
    """A compiling run, a warm-up run and one timed run; then up to ``repeat - 1`` more
    that fit before ``until`` (perf_counter seconds). Returns median, fastest, kernels,
    timed runs.

    The run right after the compiling one is not timed: it still pays first-call costs (the
    memory pool filling, fresh pages, Numba's dispatch caches) that no later run pays — on
    the quiet run of 2026-11-24 the rows measured by that run alone were 68% off the model
    (median), the others 24%."""
    parts = {k: [list(b) for b in blocks] for k, blocks in enumerate(key)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        r = run(cap, partitions=parts, cache=kernels, repeat=2)
        times = list(r.times[1:])
        left = max(0.0, until - time.perf_counter())
        more = repeat - 1 if math.isinf(left) else min(repeat - 1, int(left / max(times[0], 1e-6)))
        if more > 0:
            times += run(cap, partitions=parts, cache=kernels, repeat=more).times
    return statistics.median(times), min(times), r.kernels, len(times)


def _price(batches: list[Any], key: tuple, time_model: TimeModel) -> dict[str, float]:
    """Every model's cost of a partition, summed over the batches; for ``time`` its
    prediction of the run (:func:`fusionlab.costs.timemodel.predict_seconds`: the cost plus the
    driver's fixed cost per run)."""
    out = {}
    for name in MODELS:
        if name == "time":
            out[name] = predict_seconds(batches, key, time_model.figures, time_model.min_size,
                                        time_model.opaque_seconds)
            continue
        model = get_cost_model(name)
        out[name] = float(sum(model.cost(b, [list(x) for x in blocks]) for b, blocks in zip(batches, key)))
    return out


def bench_program(name: str, preset: str, repeat: int, kernels: KernelCache, time_model: TimeModel,
                  reuse: dict[tuple, list[str]] | None = None, until: float = math.inf,
                  not_run: list[dict] | None = None) -> list[dict]:
    """The rows of one workload at one preset: one per distinct set of kernels (``reuse``:
    the partitions of an earlier run, measured again instead of searched again). The
    partitions are measured in :data:`PRIORITY` order until ``until`` (perf_counter
    seconds): each gets a compiling run and one timed run, and more as its share of the
    time left allows; those left out, or predicted far slower than the rest, go to
    ``not_run`` with the reason."""
    with contextlib.redirect_stdout(io.StringIO()):
        cap = capture(get_workload(name).script(preset))
    # its opaque calls priced by the seconds they took at capture (a matmul is not a map)
    time_model = TimeModel(time_model.figures, time_model.min_size, opaque_seconds=cap.externals.seconds,
                           by_blocks=runs_block_by_block(cap.batches))
    t = time.perf_counter()
    parts = reuse if reuse else _partitions(cap.batches, MergeCache(), time_model)
    parts = _dedupe(cap.batches, parts)
    partition_seconds = time.perf_counter() - t
    predicted = {key: _price(cap.batches, key, time_model)["time"] for key in parts}
    fastest = min(predicted.values())
    order = sorted(parts, key=lambda k: (_rank(parts[k]), predicted[k]))
    rows = []
    for n, key in enumerate(order):
        chosen_by = parts[key]
        left = until - time.perf_counter()
        why = ""
        if predicted[key] > SLOW_FACTOR * fastest and predicted[key] > SLOW_SECONDS:
            why = f"predicted {predicted[key]:.2f} s, over {SLOW_FACTOR:g}x the program's fastest prediction"
        elif left <= 0 and rows:
            why = "the program's share of the --minutes budget ran out"
        if why:
            if not_run is not None:
                not_run.append({"workload": name, "preset": preset, "chosen_by": chosen_by[:3], "reason": why})
            continue
        share = time.perf_counter() + max(left, 0.0) / (len(order) - n)
        med, low, n_kernels, runs = _measure(cap, key, repeat, kernels, share)
        parts_time = [b for prog, blocks in zip(cap.batches, key)
                      for b in time_model.block_times(prog, [list(x) for x in blocks])]
        bound = {k: sum(1 for b in parts_time if b.bound == k) for k in ("launch", "memory", "compute")}
        rows.append({
            "workload": name, "preset": preset, "corpus": name in CORPUS, "chosen_by": chosen_by,
            "instructions": sum(len(b) for b in cap.batches), "batches": len(cap.batches),
            "blocks": sum(len(k) for k in key), "kernels": n_kernels,
            "measured_seconds": med, "min_seconds": low, "costs": _price(cap.batches, key, time_model),
            "bound_blocks": bound, "partition_seconds": round(partition_seconds, 3), "timed_runs": runs,
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


def _runs(data: dict[str, Any]) -> str:
    """How many timed runs the partitions got (fewer where a program's share ran short)."""
    runs = [r.get("timed_runs", data["meta"]["repeat"]) for r in data["rows"]]
    if not runs:
        return "none"
    full = sum(1 for x in runs if x >= data["meta"]["repeat"])
    if full == len(runs):
        return f"all {len(runs)} with all {data['meta']['repeat']} timed runs"
    return f"{full} of {len(runs)} with all {data['meta']['repeat']}, the rest {min(runs)} or more"


def _not_run_lines(meta: dict[str, Any]) -> list[str]:
    """The partitions left out, and why, one line per reason."""
    by_reason: dict[str, list[str]] = {}
    for x in meta.get("not_run", []):
        reason = x["reason"].split(" s, over")[0] if x["reason"].startswith("predicted") else x["reason"]
        key = "predicted far slower than the program's fastest" if x["reason"].startswith("predicted") else reason
        by_reason.setdefault(key, []).append(f"{x['workload']}/{x['preset']} ({x['chosen_by'][0]})")
    return [f"- {reason} ({len(v)}): {', '.join(v)}" for reason, v in by_reason.items()]


def report(data: dict[str, Any]) -> str:
    s, meta = data["summary"], data["meta"]
    lines = [
        f"Measured {meta['date']} on {meta['cpu']}, {meta['cores']} cores, Python {meta['python']}; "
        f"`bench_time_model.py` ran {meta['seconds'] / 60:.1f} minutes; load average {meta['load_start']} at the "
        f"start, {meta['load_end']} at the end (the machine was {'shared' if max(meta['load_start'], meta['load_end']) > 1 else 'quiet'}). "
        f"{meta['programs']} programs ({meta['workloads']} workloads × presets {', '.join(meta['presets'])}), "
        f"{meta['partitions']} partitions with distinct kernels, each run up to {meta['repeat']} times after a "
        f"compiling run ({_runs(data)}; Python driver; median). The time model's figures: {meta['figures']}."
        + (f" Programs measured again in a later run (their first timed run dropped as a warm-up): "
           f"{', '.join(meta['remeasured'])}." if meta.get("remeasured") else "")
        + (f" Every partition's cost was priced again on {meta['repredicted']} with those figures "
           f"(`--repredict`; the measured times unchanged)." if meta.get("repredicted") else ""),
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
              "`fusionlab.costs.timemodel.explain`):", "",
              "- **Opaque NumPy calls** are priced by the seconds they took at capture, and a contraction "
              "(`CONTRACT`) by its flops at the calibrated `np.einsum` rate; a program with either runs block by "
              "block (no driver), priced per block (Python's bookkeeping) and per instruction NumPy runs (a call "
              "from the executor), both calibrated.",
              "- **Medium programs on a shared machine**: a parallel kernel waits for the core another process "
              "holds (whole time slices); the calibration's parallel figures come from quiet moments, so "
              "measured times above the load's own noise are under-predicted. The load average is recorded "
              "above; the per-preset table shows tiny (launch-bound, little affected) against medium.",
              "- **Bandwidth by working set**: a program's traffic is priced at the calibrated bandwidth for its "
              "peak of live arrays (one figure per program, which keeps the model monotone); a kernel whose own "
              "arrays fit a faster level than the program's peak runs faster than predicted."]
    if meta.get("note"):
        lines += ["", f"Note: {meta['note']}."]
    if meta.get("not_run"):
        lines += ["", f"Partitions not run ({len(meta['not_run'])}; every program had at least one run):", ""]
        lines += _not_run_lines(meta)
    return "\n".join(lines)


def _order(names: list[str], presets: list[str]) -> list[tuple[str, str]]:
    """Programs in the order run: each workload at every preset, the workloads in the order
    given — by default the smaller programs (fewer instructions at the first preset) first.
    With ``--minutes``, each program gets an equal share of the time left when it starts
    (a quick one leaves more to those after it), so every program is measured."""
    return [(n, p) for n in names for p in presets if p in get_workload(n).presets]


def _by_size(names: list[str], preset: str) -> list[str]:
    sizes = {}
    for n in names:
        with contextlib.redirect_stdout(io.StringIO()):
            sizes[n] = sum(len(b) for b in capture(get_workload(n).script(preset)).batches)
    return sorted(names, key=lambda n: (sizes[n], n))


def repredict(data: dict[str, Any], figures: Any) -> dict[str, Any]:
    """The results ``data`` with every row's costs priced again from ``figures`` (the
    measured times unchanged): a new calibration judged against the same measurements.
    Each program is captured again for its batches and its opaque calls' seconds."""
    rows = data["rows"]
    for name, preset in dict.fromkeys((r["workload"], r["preset"]) for r in rows):
        with contextlib.redirect_stdout(io.StringIO()):
            cap = capture(get_workload(name).script(preset))
        model = TimeModel(figures, opaque_seconds=cap.externals.seconds, by_blocks=runs_block_by_block(cap.batches))
        for r in rows:
            if (r["workload"], r["preset"]) == (name, preset):
                key = tuple(tuple(tuple(b) for b in blocks) for blocks in r["partition"])
                r["costs"] = _price(cap.batches, key, model)
    meta = dict(data["meta"], figures=figures.label,
                repredicted=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))
    return dict(data, meta=meta, summary=summarise(rows), per_preset=_per_preset(rows), worst=_worst(rows))


def replace_programs(data: dict[str, Any], newer: dict[str, Any]) -> dict[str, Any]:
    """``data`` with the rows of every program ``newer`` measured replaced by ``newer``'s."""
    again = {(r["workload"], r["preset"]) for r in newer["rows"]}
    rows = [r for r in data["rows"] if (r["workload"], r["preset"]) not in again] + newer["rows"]
    not_run = [x for x in data["meta"]["not_run"] if (x["workload"], x["preset"]) not in again]
    meta = dict(data["meta"], not_run=not_run + newer["meta"]["not_run"], partitions=len(rows),
                programs=len({(r["workload"], r["preset"]) for r in rows}),
                workloads=len({r["workload"] for r in rows}),
                remeasured=sorted(set(data["meta"].get("remeasured", [])) | {f"{w} {p}" for w, p in again}))
    return dict(data, meta=meta, summary=summarise(rows), per_preset=_per_preset(rows), worst=_worst(rows), rows=rows)


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
                    help="the run's budget (0: no limit): each program gets an equal share of the time left, "
                         "its partitions fewer timed runs (at least one each) when the share runs short; "
                         "results are written after each program")
    ap.add_argument("--no-calibrate", action="store_true",
                    help="without a calibration file, use the default figures instead of running `fusionlab calibrate`")
    ap.add_argument("--reuse", default="",
                    help="a results file of an earlier run: its programs' partitions are measured again, not searched")
    ap.add_argument("--report-only", action="store_true",
                    help="rebuild the README section from the results file (--out) without measuring")
    ap.add_argument("--repredict", action="store_true",
                    help="price the results file's (--out) partitions again with this machine's calibration, "
                         "keeping the measured times, and rebuild the README section")
    ap.add_argument("--replace-from", default="",
                    help="a results file of a run over some programs: its rows replace those programs' rows "
                         "in --out, then the README section is rebuilt")
    args = ap.parse_args(argv)
    if args.repredict or args.replace_from:
        data = json.loads(Path(args.out).read_text())
        if args.replace_from:
            data = replace_programs(data, json.loads(Path(args.replace_from).read_text()))
        if args.repredict:
            data = repredict(data, load_figures())
        Path(args.out).write_text(json.dumps(data, indent=1) + "\n")
        args.report_only = True
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
    if figures.source == "default" and not args.no_calibrate:
        # the model predicts this machine only from its own figures (the defaults are another machine's)
        print("no calibration of this machine: running `fusionlab calibrate` (under a minute)", file=sys.stderr)
        figures = calibrate().figures
    time_model = TimeModel(figures)
    kernels = KernelCache()
    rows: list[dict] = []
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    data: dict[str, Any] = {}
    programs = _order(names, presets)
    not_run: list[dict] = []
    for done, (name, preset) in enumerate(programs):
        # each program gets an equal share of the time left: every program is measured
        until = math.inf
        if args.minutes:
            until = time.perf_counter() + (started + 60 * args.minutes - time.perf_counter()) / (len(programs) - done)
        t = time.perf_counter()
        got = bench_program(name, preset, args.repeat, kernels, time_model, reused.get((name, preset)), until, not_run)
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
                "algorithms": ALGORITHMS, "models": MODELS, "options": OPTIONS,
                "not_run": not_run, "minutes": args.minutes,
            },
            "summary": summarise(rows), "per_preset": _per_preset(rows), "worst": _worst(rows), "rows": rows,
        }
        out.write_text(json.dumps(data, indent=1) + "\n")   # after each program: a run cut short keeps its figures
    out.write_text(json.dumps(data, indent=1) + "\n")
    text = report(data)
    print(text)
    if not (args.quick or args.no_readme):
        write_section("bench_time_model", text, "## Which cost model predicts the clock? (`bench_time_model.py`)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
