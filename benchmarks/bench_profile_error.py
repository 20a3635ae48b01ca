"""The time model block by block: every corpus program at ``medium`` profiled
(:func:`fusionlab.pipeline.profiling.profile`), each block's measured time beside the ``time``
model's prediction for it.

Run ``.venv/bin/python benchmarks/bench_profile_error.py`` (``--programs a,b`` to choose,
``--preset tiny`` for a quick look, ``--repeat N`` timed runs per block, 11 by default: the
median of tiny blocks moves by tens of percent from run to run with 5). What it does:

1. per corpus program, capture it at the preset and profile greedy's partition under
   Bohrium with every pass, as ``fusionlab run`` runs it (``run``'s configuration): one
   warm-up, then ``--repeat`` block-by-block runs, each block timed, interleaved with whole
   runs by the Python driver;
2. the blocks of alike batches (a loop's iterations: the same instructions, bytes, flops and
   prediction) are one block, measured as the median of their times;
3. per block the ratio predicted / measured; reported: the median of ``|log ratio|`` (0:
   exact; 0.69: a factor of two), the median ratio (below 1: the model is optimistic), its
   quartiles, the same per program, and the five largest misses, each with its reason
   (:func:`fusionlab.pipeline.profiling.miss_reason`: an opaque call, a complex dtype, a
   NumPy-run block, a tiny array, a launch-dominated block, or the memory or compute part).

The model's figures are this machine's calibration; without one, ``fusionlab calibrate``
measures the machine first (not stored: the user's cache is left alone; ``--no-calibrate``
takes the default figures, ``--figures FILE`` those of a results file). A program whose capture and profile take longer than
``--program-seconds`` is left out, and the report says so. Writes
benchmarks/results/profile_error.json and the "time model, block by block" section of
benchmarks/README.md. The cells of issue 34 (``benchmarks/cells/``: the heat equation with
``np.roll``, Mandelbrot with boolean masks in complex numbers, ...) are profiled too, beside
NumPy eager's time, with where a run slower than NumPy spent its time. The machine's load average is recorded at the start and the end.
"""

from __future__ import annotations

import argparse
import contextlib
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

from fusionlab.backend.numba.plan import DEFAULT_MIN_SIZE, KernelCache
from fusionlab.capture import capture
from fusionlab.costs.timemodel import MachineFigures, cpu_model, load_figures
from fusionlab.pipeline.profiling import BlockRuns, KernelTiming, miss_kind, miss_reason, profile
from fusionlab.pipeline.runner import run_config
from fusionlab.workloads import CORPUS

from _report import write_section

HERE = Path(__file__).resolve().parent
HEADING = "## The time model, block by block (`bench_profile_error.py`)"
WORST = 5


class _Alarm(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise _Alarm


def _load() -> float:
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return 0.0


def _row(program: str, k: KernelTiming) -> dict[str, Any]:
    return {"program": program, "batch": k.batch, "block": k.block, "instructions": list(k.instructions),
            "runs": k.runs.value, "parallel": k.parallel, "measured_seconds": k.measured_seconds,
            "predicted_seconds": k.predicted_seconds, "bytes": k.bytes, "flops": k.flops, "bound": k.bound,
            "label": k.label, "elements": k.elements, "complex": k.complex_dtype, "first_parallel": k.first_parallel,
            "first_touch_bytes": k.first_touch_bytes, "kind": miss_kind(k).value, "reason": miss_reason(k)}


def distinct(program: str, kernels: tuple[KernelTiming, ...]) -> list[dict[str, Any]]:
    """One row per distinct block of a program (the blocks of alike batches are one: the
    same instructions, label, bytes, flops and prediction), measured as their median, with
    how many blocks it stands for (``instances``).

    >>> k = KernelTiming(1, 1, (1,), BlockRuns.KERNEL, False, 1e-3, 5e-4, 8, 8, 1, "memory", "ADD", elements=1)
    >>> rows = distinct("p", (k, KernelTiming(2, 1, (1,), BlockRuns.KERNEL, False, 3e-3, 5e-4, 8, 8, 1, "memory",
    ...                                       "ADD", elements=1)))
    >>> [(r["batch"], r["measured_seconds"], r["instances"]) for r in rows]
    [(1, 0.002, 2)]
    """
    groups: dict[tuple[Any, ...], list[KernelTiming]] = {}
    for k in kernels:
        key = (k.instructions, k.label, k.bytes, k.flops, k.predicted_seconds, k.runs, k.parallel)
        groups.setdefault(key, []).append(k)
    out = []
    for ks in groups.values():
        row = _row(program, ks[0])
        row["measured_seconds"] = statistics.median(k.measured_seconds for k in ks)
        row["instances"] = len(ks)
        out.append(row)
    return out


def _ratio(r: dict[str, Any]) -> float | None:
    p, m = r["predicted_seconds"], r["measured_seconds"]
    return p / m if p is not None and p > 0 and m > 0 else None


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The model's error over ``rows``: median ``|log ratio|``, median ratio and quartiles,
    and the blocks of each kind."""
    ratios = [x for x in (_ratio(r) for r in rows) if x is not None]
    if not ratios:
        return {"blocks": len(rows), "predicted": 0}
    logs = [abs(math.log(x)) for x in ratios]
    q = statistics.quantiles(ratios, n=4, method="inclusive") if len(ratios) > 1 else [ratios[0]] * 3
    kinds = {kind.value: sum(1 for r in rows if r["runs"] == kind.value) for kind in BlockRuns}
    return {"blocks": len(rows), "predicted": len(ratios), "median_abs_log_ratio": statistics.median(logs),
            "median_ratio": statistics.median(ratios), "ratio_q1": q[0], "ratio_q3": q[2],
            "within_2x": sum(1 for x in logs if x <= math.log(2)) / len(logs), "kinds": kinds}


def worst(rows: list[dict[str, Any]], n: int = WORST, per_program: bool = True) -> list[dict[str, Any]]:
    """The ``n`` blocks with the largest ``|log ratio|`` (``per_program``: the largest of
    each program, so one program's loop does not fill the list)."""
    ranked = [r for r in rows if _ratio(r) is not None]
    ranked.sort(key=lambda r: -abs(math.log(_ratio(r))))  # type: ignore[arg-type]
    if per_program:
        seen: set[str] = set()
        ranked = [r for r in ranked if not (r["program"] in seen or seen.add(r["program"]))]  # type: ignore[func-returns-value]
    return ranked[:n]


def _program_median(data: dict[str, Any]) -> float:
    got = [p["summary"]["median_abs_log_ratio"] for p in data["programs"].values()
           if "median_abs_log_ratio" in p["summary"]]
    return statistics.median(got) if got else float("nan")


def _ms(s: float | None) -> str:
    return "—" if s is None else f"{s * 1e3:.3f}"


def report(data: dict[str, Any]) -> str:
    """The README section from the results."""
    meta, s, rows = data["meta"], data["summary"], data["rows"]
    lines = [
        f"Measured {meta['date']} on {meta['cpu']}, {meta['cores']} cores, Python {meta['python']}; "
        f"`bench_profile_error.py` ran {meta['seconds'] / 60:.1f} minutes; load average {meta['load_start']} at the "
        f"start, {meta['load_end']} at the end. {meta['programs']} corpus programs at `{meta['preset']}`, greedy "
        f"under Bohrium with every pass (`fusionlab run`'s configuration), profiled with "
        f"`fusionlab.pipeline.profiling.profile`: one warm-up, then {meta['repeat']} block-by-block runs (each block "
        "timed, its median kept) interleaved with whole runs by the Python driver. The blocks of alike batches (a "
        f"loop's iterations) are one block: {s['blocks']} distinct blocks ({s.get('kinds', {}).get('kernel', 0)} "
        f"kernels, {s.get('kinds', {}).get('numpy', 0)} run by NumPy, {s.get('kinds', {}).get('opaque', 0)} opaque "
        f"calls), {s['predicted']} of them predicted. The model's figures: {meta['figures']}.",
    ]
    threads: dict[str, int] = {}
    for prog in data["programs"].values():
        threads[prog.get("threads", "")] = threads.get(prog.get("threads", ""), 0) + 1
    if threads:
        lines.append("")
        lines.append("Numba threads of the runs (chosen from the cores free; the calibration's parallel figures are "
                     f"for {data.get('figures', {}).get('threads', '?')}): "
                     + "; ".join(f"{n} program{'s' if n != 1 else ''} with {t}" for t, n in threads.items()) + ".")
    if meta.get("left_out"):
        lines.append("")
        lines.append("Left out: " + "; ".join(f"{x['program']} ({x['why']})" for x in meta["left_out"]) + ".")
    if "median_abs_log_ratio" in s:
        med = s["median_abs_log_ratio"]
        lines += [
            "",
            "| blocks predicted | median \\|log(predicted / measured)\\| | the same as a factor | median predicted / measured | "
            "quartiles of predicted / measured | within 2x |",
            "| ---: | ---: | ---: | ---: | --- | ---: |",
            f"| {s['predicted']} | {med:.2f} | {math.exp(med):.2f}x | {s['median_ratio']:.2f} | "
            f"{s['ratio_q1']:.2f}-{s['ratio_q3']:.2f} | {s['within_2x']:.0%} |",
            "",
            f"Each program weighed once (gauss_pivot and lu_rows have a kernel per column): the median over the "
            f"programs of their median |log ratio| is {_program_median(data):.2f} "
            f"({math.exp(_program_median(data)):.2f}x).",
            "",
            "Per program (distinct blocks; the median of predicted / measured below 1: the model is optimistic):",
            "",
            "| program | blocks | median \\|log ratio\\| | median predicted / measured | run ms (driver) | blocks' sum ms | "
            "between ms | threads |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
        ]
        for name, p in sorted(data["programs"].items()):
            ps = p["summary"]
            if "median_abs_log_ratio" not in ps:
                continue
            lines.append(f"| {name} | {ps['blocks']} | {ps['median_abs_log_ratio']:.2f} | {ps['median_ratio']:.2f} | "
                         f"{_ms(p['run_seconds'])} | {_ms(p['blocks_seconds'])} | {_ms(p['between_seconds'])} | "
                         f"{p.get('threads', '')} |")
        lines += [
            "",
            f"The {WORST} largest misses (the largest of each program; error = predicted / measured), each with its "
            "reason (`fusionlab.pipeline.profiling.miss_reason`):",
            "",
            "| program | block | runs | label | elements | predicted ms | measured ms | predicted / measured | reason |",
            "| --- | --- | --- | --- | ---: | ---: | ---: | ---: | --- |",
        ]
        for r in worst(rows):
            label = r["label"].replace("|", "\\|")
            lines.append(f"| {r['program']} | {r['batch']}.{r['block']} | {r['runs']}{' (parallel)' if r['parallel'] else ''} "
                         f"| {label} | {r['elements']:,} | {_ms(r['predicted_seconds'])} | {_ms(r['measured_seconds'])} | "
                         f"{_ratio(r):.3g} | {r['reason']} |")
        reasons: dict[str, list[float]] = {}
        for r in rows:
            x = _ratio(r)
            if x is not None and abs(math.log(x)) > math.log(2):
                reasons.setdefault(r["kind"], []).append(x)
        if reasons:
            lines += ["", "Blocks off by more than 2x, by reason (`fusionlab.pipeline.profiling.MissKind`; the median "
                      "predicted / measured of each):", "", "| reason | blocks | median predicted / measured |",
                      "| --- | ---: | ---: |"]
            lines += [f"| {k} | {len(v)} | {statistics.median(v):.2f} |"
                      for k, v in sorted(reasons.items(), key=lambda kv: -len(kv[1]))]
    cells = data.get("cells") or {}
    if cells:
        lines += [
            "",
            "The cells of issue 34 (`benchmarks/cells/`, as written), profiled the same way, with NumPy eager's time "
            "(the cell run plainly, the median of as many runs) and where a run slower than NumPy spent its time "
            "(`fusionlab.pipeline.profiling.why_slower`):",
            "",
            "| cell | blocks | median \\|log ratio\\| | run ms | NumPy ms | its largest miss | why slower than NumPy |",
            "| --- | ---: | ---: | ---: | ---: | --- | --- |",
        ]
        for name, c in sorted(cells.items()):
            if "error" in c:
                lines.append(f"| {name} | — | — | — | — | {c['error']} | |")
                continue
            cs = c["summary"]
            big = worst(c["rows"], 1)
            miss = (f"{big[0]['batch']}.{big[0]['block']} {big[0]['label']}: {_ratio(big[0]):.3g}x, "
                    f"{big[0]['reason']}" if big else "—").replace("|", "\\|")
            why = "; ".join(f"{w['reason']} {w['seconds'] * 1e3:.3f} ms" for w in c["why_slower"]) or "not slower"
            if not c.get("comparable", True):
                why = (f"not comparable: NumPy on the recorded operations takes {_ms(c['recorded_seconds'])} ms, the "
                       "rest of the cell ran outside the recording")
            med = cs.get("median_abs_log_ratio")
            lines.append(f"| {name} | {cs['blocks']} | {'—' if med is None else f'{med:.2f}'} | {_ms(c['run_seconds'])} | "
                         f"{_ms(c['numpy_seconds'])} | {miss} | {why} |")
    lines += ["", "Rerun: `.venv/bin/python benchmarks/bench_profile_error.py` (`--figures "
              "benchmarks/results/profile_error.json` predicts with the figures above; `--report-only` rebuilds this "
              "section from that file)."]
    return "\n".join(lines)


def bench_program(name: str, preset: str, repeat: int, kernels: KernelCache, figures: MachineFigures) -> dict[str, Any]:
    """One program's profile: its distinct blocks and its run's figures."""
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cap = capture(CORPUS[name].script(preset), {"__name__": "__main__"})
        got = profile(cap, run_config("greedy", "bohrium", DEFAULT_MIN_SIZE, True), cache=kernels, repeat=repeat,
                      figures=figures)
    rows = distinct(name, got.kernels)
    return {"rows": rows, "summary": summarise(rows), "run_seconds": got.run_seconds,
            "blocks_seconds": got.blocks_seconds, "between_seconds": got.between_seconds, "driver": got.driver,
            "threads": got.threads, "instances": len(got.kernels)}


def _plain_seconds(source: str, repeat: int) -> float:
    """The median of ``repeat`` plain runs of ``source`` after a warm-up (output discarded)."""
    def once() -> float:
        t = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(compile(source, "<numpy>", "exec"), {"__name__": "__main__"})
        return time.perf_counter() - t

    once()
    return statistics.median(once() for _ in range(repeat))


def _replay_seconds(cap: Any, repeat: int) -> float:
    """The median of ``repeat`` runs of NumPy on the operations capture recorded (the
    reference executor replaying them), after a warm-up."""
    from fusionlab.runtime.reference import Storage, run_reference

    def once() -> float:
        t = time.perf_counter()
        storage = Storage(dict(cap.inputs))
        for b in cap.batches:
            run_reference(b, externals=cap.externals, storage=storage)
        return time.perf_counter() - t

    once()
    return statistics.median(once() for _ in range(repeat))


def bench_cell(path: Path, repeat: int, kernels: KernelCache, figures: MachineFigures) -> dict[str, Any]:
    """One cell of ``benchmarks/cells``: its profile, NumPy eager's time and why slower. A
    cell whose plain run takes more than ``OUTSIDE_RATIO`` times NumPy on its recorded
    operations did work outside the recording (``compare``'s rule): no "why slower" then."""
    from fusionlab.pipeline.comparison import OUTSIDE_RATIO

    source = path.read_text()
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        cap = capture(source, {"__name__": "__main__"})
        numpy = _plain_seconds(source, repeat)
        recorded = _replay_seconds(cap, repeat)
        comparable = numpy <= OUTSIDE_RATIO * recorded
        got = profile(cap, run_config("greedy", "bohrium", DEFAULT_MIN_SIZE, True), cache=kernels, repeat=repeat,
                      figures=figures, numpy_seconds=numpy if comparable else None)
    rows = distinct(path.stem, got.kernels)
    return {"rows": rows, "summary": summarise(rows), "run_seconds": got.run_seconds, "numpy_seconds": numpy,
            "recorded_seconds": recorded, "comparable": comparable,
            "why_slower": [w.to_dict() for w in got.why_slower()], "driver": got.driver}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--programs", default="", help="comma-separated corpus programs (default: all)")
    ap.add_argument("--preset", default="medium")
    ap.add_argument("--repeat", type=int, default=11, help="timed block-by-block runs per program (each block's median)")
    ap.add_argument("--program-seconds", type=float, default=240.0,
                    help="a program whose capture and profile take longer is left out (0: no limit)")
    ap.add_argument("--no-calibrate", action="store_true",
                    help="without a calibration file, use the default figures instead of measuring this machine")
    ap.add_argument("--figures", default="", help="the time model's figures from this JSON file "
                    "(MachineFigures.to_dict, or a results file: its `figures`) instead of this machine's")
    ap.add_argument("--cells", default="all", help="cells of benchmarks/cells/ to profile too (comma-separated "
                    "names, 'all' or 'none')")
    ap.add_argument("--out", default=str(HERE / "results" / "profile_error.json"))
    ap.add_argument("--no-readme", action="store_true")
    ap.add_argument("--report-only", action="store_true", help="rebuild the README section from --out")
    args = ap.parse_args(argv)
    out = Path(args.out)
    if args.report_only:
        text = report(json.loads(out.read_text()))
        print(text)
        if not args.no_readme:
            write_section("bench_profile_error", text, HEADING)
        return 0
    names = [n for n in args.programs.split(",") if n] or list(CORPUS)
    started, load_start = time.perf_counter(), _load()
    if args.figures:   # figures, or a results file holding them (its `figures`)
        given = json.loads(Path(args.figures).read_text())
        figures = MachineFigures.from_dict(given.get("figures", given))
    else:
        figures = load_figures()
    if figures.source == "default" and not args.no_calibrate:
        from fusionlab.tools.calibrate import calibrate, format_figures

        print("no calibration of this machine: measuring it (`fusionlab calibrate`, not stored)", file=sys.stderr)
        figures = calibrate(store=False).figures
        print(format_figures(figures), file=sys.stderr)
    kernels = KernelCache()
    programs: dict[str, Any] = {}
    left_out: list[dict[str, str]] = []
    rows: list[dict[str, Any]] = []
    signal.signal(signal.SIGALRM, _alarm)
    for name in names:
        t = time.perf_counter()
        if args.program_seconds:
            signal.setitimer(signal.ITIMER_REAL, args.program_seconds)
        try:
            got = bench_program(name, args.preset, args.repeat, kernels, figures)
        except _Alarm:
            left_out.append({"program": name, "why": f"capture and profile past {args.program_seconds:g} s"})
            print(f"{name:<24} left out: past {args.program_seconds:g} s", file=sys.stderr)
            continue
        except Exception as exc:  # a program the backend cannot run: said, not fatal
            left_out.append({"program": name, "why": f"{type(exc).__name__}: {str(exc)[:120]}"})
            print(f"{name:<24} left out: {type(exc).__name__}: {exc}", file=sys.stderr)
            continue
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        programs[name] = {k: v for k, v in got.items() if k != "rows"}
        rows += got["rows"]
        s = got["summary"]
        print(f"{name:<24}{len(got['rows']):>4} blocks  median |log ratio| "
              f"{s.get('median_abs_log_ratio', float('nan')):.2f}  {time.perf_counter() - t:6.1f} s", file=sys.stderr)
    cells: dict[str, Any] = {}
    wanted = [] if args.cells == "none" else sorted((HERE / "cells").glob("*.py")) if args.cells == "all" else \
        [HERE / "cells" / f"{c}.py" for c in args.cells.split(",") if c]
    for path in wanted:
        t = time.perf_counter()
        if args.program_seconds:
            signal.setitimer(signal.ITIMER_REAL, args.program_seconds)
        try:
            cells[path.stem] = bench_cell(path, args.repeat, kernels, figures)
        except _Alarm:
            cells[path.stem] = {"error": f"capture and profile past {args.program_seconds:g} s"}
        except Exception as exc:  # a cell the backend cannot run: said, not fatal
            cells[path.stem] = {"error": f"{type(exc).__name__}: {str(exc)[:120]}"}
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        print(f"cell {path.stem:<24} {time.perf_counter() - t:6.1f} s", file=sys.stderr)
    data = {
        "meta": {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "cpu": cpu_model(),
                 "cores": os.cpu_count(), "python": platform.python_version(),
                 "seconds": time.perf_counter() - started, "load_start": load_start, "load_end": _load(),
                 "preset": args.preset, "repeat": args.repeat, "programs": len(programs),
                 "figures": figures.label, "left_out": left_out},
        "figures": figures.to_dict(), "summary": summarise(rows), "programs": programs, "rows": rows,
        "cells": cells,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=1) + "\n")
    text = report(data)
    print(text)
    if not args.no_readme:
        write_section("bench_profile_error", text, HEADING)
    return 0


if __name__ == "__main__":
    sys.exit(main())
