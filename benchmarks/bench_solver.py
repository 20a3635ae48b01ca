"""Do the exact searches finish? The solver table of issue 16.

For every paper workload at every preset it has, the program is captured as
``fusionlab partition <workload>`` and the report capture it (one program per batch; batches
with the same signature — the merge cache's key — are solved once), and each distinct
batch is solved by the exact portfolio (``exact``: independent parts, branch and bound,
then the ILP) under the Bohrium model with ``--budget`` seconds (10 by default, the issue's
target). On the largest batch of each row the branch and bound alone (``optimal``) and the
ILP alone (``ilp``) run too, with the same budget, to show which part proves it. Then random
cells of 100, 200 and 300 instructions (``fusionlab.ir.examples.random_program``) and a few
cells of the realistic corpus, with ``--cell-budget`` seconds (2 by default, the target for
cells). Tests never assert on these times.

Run: ``.venv/bin/python benchmarks/bench_solver.py`` (writes the "Solver table" section of
README.md and ``results/solver.json``); ``--quick`` runs the tiny preset of four workloads
and one random cell, and prints only. Capturing the ``paper`` preset runs the workloads at
the paper's sizes (Game of Life and the heat equation hold arrays of about 1 GB):
``--presets tiny,medium,large`` leaves it out.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _report import write_section  # noqa: E402

from fusionlab.ir.bytecode import Program  # noqa: E402
from fusionlab.capture import capture  # noqa: E402
from fusionlab.ir.examples import random_program  # noqa: E402
from fusionlab.partition import partition  # noqa: E402
from fusionlab.workloads import CORPUS, PAPER_WORKLOADS, WORKLOADS  # noqa: E402

PRESET_ORDER = ("tiny", "medium", "large", "paper")
CORPUS_CELLS = (("gray_scott", "tiny"), ("wave_1d", "tiny"), ("kmeans_step", "tiny"), ("softmax_logsumexp", "tiny"),
                ("nbody_pairwise", "tiny"), ("sir_dict", "tiny"))


def distinct_batches(source: str) -> tuple[int, list[Program]]:
    """The number of batches the capture makes, and the distinct ones (by signature)."""
    with contextlib.redirect_stdout(io.StringIO()):
        cap = capture(source, {"__name__": "__main__"})
    seen: dict[str, Program] = {}
    for b in cap.batches:
        if len(b):
            seen.setdefault(b.signature(), b)
    return len(cap.batches), list(seen.values())


def solve(program: Program, algorithm: str, model: str, budget: float) -> dict[str, Any]:
    """One run: proven or not, seconds, method, cost and bound."""
    started = time.perf_counter()
    r = partition(program, algorithm, model, time_limit=budget)
    seconds = time.perf_counter() - started
    method = ""
    if r.proven_optimal:
        method = {"optimal": "branch and bound", "ilp": "ILP"}.get(algorithm, "")
        if algorithm == "exact":
            how = r.notes[0]
            method = " + ".join(m for m, word in (("B&B", "branch and bound"), ("ILP", "ILP"), ("bounds", "bounds"))
                                if word in how)
            detail = " ".join(r.notes[1:2])
            if "independent parts" in detail:
                method += f" ({detail.split(' independent')[0]} parts)"
            elif "split by iteration shape" in detail:
                method += " (shape split)"
    gap = None
    if not r.proven_optimal and r.bound is not None and r.cost:
        gap = (r.cost - r.bound) / r.cost
    return {"instructions": len(program), "algorithm": algorithm, "proven": r.proven_optimal,
            "seconds": round(seconds, 4), "method": method, "cost": r.cost, "bound": r.bound, "gap": gap}


def solve_row(label: str, preset: str, batches: int, programs: list[Program], model: str, budget: float,
              compare: bool) -> dict[str, Any]:
    """Every distinct batch by ``exact``; the largest also by ``optimal`` and ``ilp`` alone."""
    runs = [solve(p, "exact", model, budget) for p in programs]
    row: dict[str, Any] = {
        "program": label, "preset": preset, "model": model, "batches": batches, "distinct": len(programs),
        "max_instructions": max((r["instructions"] for r in runs), default=0),
        "proven": sum(r["proven"] for r in runs), "max_seconds": max((r["seconds"] for r in runs), default=0.0),
        "total_seconds": round(sum(r["seconds"] for r in runs), 3),
        "methods": sorted({r["method"] for r in runs if r["method"]}),
        "worst_gap": max((r["gap"] for r in runs if r["gap"] is not None), default=None),
        "runs": runs,
    }
    if compare and programs:
        largest = max(programs, key=len)
        row["largest_alone"] = {alg: solve(largest, alg, model, budget) for alg in ("optimal", "ilp")}
    return row


def workload_rows(names: list[str], presets: list[str], models: list[str], budget: float,
                  compare: bool) -> list[dict[str, Any]]:
    rows = []
    for name in names:
        w = WORKLOADS[name]
        for preset in [p for p in PRESET_ORDER if p in presets and p in w.presets]:
            started = time.perf_counter()
            try:
                batches, programs = distinct_batches(w.script(preset))
            except MemoryError:
                rows.append({"program": name, "preset": preset, "error": "out of memory while capturing"})
                continue
            captured = time.perf_counter() - started
            for model in models:
                row = solve_row(name, preset, batches, programs, model, budget, compare)
                row["capture_seconds"] = round(captured, 2)
                rows.append(row)
                print(line(row), flush=True)
    return rows


def cell_rows(sizes: list[int], seeds: list[int], corpus: tuple[tuple[str, str], ...], models: list[str],
              budget: float, compare: bool) -> list[dict[str, Any]]:
    rows = []
    cells: list[tuple[str, str, int, list[Program]]] = []
    for n in sizes:
        for seed in seeds:
            cells.append((f"random {n} (seed {seed})", "", 1, [random_program(n, seed=seed)]))
    for name, preset in corpus:
        batches, programs = distinct_batches(CORPUS[name].script(preset))
        cells.append((f"corpus {name}", preset, batches, programs))
    for label, preset, batches, programs in cells:
        for model in models:
            row = solve_row(label, preset, batches, programs, model, budget, compare)
            rows.append(row)
            print(line(row), flush=True)
    return rows


def line(row: dict[str, Any]) -> str:
    """One table row of README.md."""
    if "error" in row:
        return f"| {row['program']} | {row['preset']} | | | | {row['error']} | | | |"
    proven = f"{row['proven']} of {row['distinct']}"
    gap = "" if row["worst_gap"] is None else f"{row['worst_gap'] * 100:.1f}%"
    alone = row.get("largest_alone", {})

    def one(alg: str) -> str:
        r = alone.get(alg)
        if r is None:
            return ""
        if r["proven"]:
            return f"{r['seconds']:.2f} s"
        return "not proven" if r["gap"] is None else f"not proven, gap {r['gap'] * 100:.1f}%"

    return (f"| {row['program']} | {row['preset']} | {row['model']} | {row['batches']} / {row['distinct']} | "
            f"{row['max_instructions']} | {proven} | {row['max_seconds']:.2f} | {', '.join(row['methods'])} | "
            f"{gap} | {one('optimal')} | {one('ilp')} |")


HEADER = ("| program | preset | model | batches / distinct | largest batch | proven | max s per batch | proved by | "
          "worst gap | largest: B&B alone | largest: ILP alone |\n"
          "| --- | --- | --- | ---: | ---: | ---: | ---: | --- | ---: | --- | --- |")


def summary(rows: list[dict[str, Any]], budget: float, cell_budget: float) -> str:
    work = [r for r in rows if not r["program"].startswith(("random", "corpus")) and "error" not in r]
    cells = [r for r in rows if r["program"].startswith(("random", "corpus"))]
    ok_w = sum(r["proven"] == r["distinct"] for r in work)
    ok_c = sum(r["proven"] == r["distinct"] and r["max_instructions"] <= 300 for r in cells)
    small = sum(r["max_instructions"] <= 300 for r in cells)
    return (f"Workload rows with every distinct batch proven within {budget:g} s: {ok_w} of {len(work)}. "
            f"Cells of up to 300 instructions proven within {cell_budget:g} s: {ok_c} of {small}.")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="tiny preset, four workloads, one random cell; print only")
    ap.add_argument("--budget", type=float, default=10.0, help="seconds per workload batch (default 10)")
    ap.add_argument("--cell-budget", type=float, default=2.0, help="seconds per cell (default 2)")
    ap.add_argument("--presets", default=",".join(PRESET_ORDER), help="comma-separated presets")
    ap.add_argument("--models", default="bohrium", help="comma-separated cost models (default bohrium)")
    ap.add_argument("--workloads", default="", help="comma-separated workload names (default: the paper's 15)")
    ap.add_argument("--no-compare", action="store_true", help="skip the B&B-alone and ILP-alone runs")
    args = ap.parse_args()
    models = args.models.split(",")
    names = args.workloads.split(",") if args.workloads else list(PAPER_WORKLOADS)
    presets = args.presets.split(",")
    sizes, seeds, corpus = [100, 200, 300], [1, 2], CORPUS_CELLS
    if args.quick:
        names = names[:4] if not args.workloads else names
        presets = ["tiny"] if args.presets == ap.get_default("presets") else presets
        sizes, seeds, corpus = [100], [1], ()
    load = os.getloadavg()[0]
    started = time.perf_counter()
    print(HEADER)
    rows = workload_rows(names, presets, models, args.budget, not args.no_compare)
    rows += cell_rows(sizes, seeds, corpus, models, args.cell_budget, not args.no_compare)
    took = time.perf_counter() - started
    if args.quick:
        print(summary(rows, args.budget, args.cell_budget))
        return
    alone = ("" if not args.no_compare else
             " (run with --no-compare: the branch and bound and the ILP alone were not run)")
    body = (f"Measured {time.strftime('%Y-%m-%d %H:%M')} in {took / 60:.1f} min, load average {load:.1f} at the "
            f"start; presets {', '.join(presets)}{alone}; {args.budget:g} s per workload batch, "
            f"{args.cell_budget:g} s per cell. "
            f"\"proven\" counts the distinct batches `exact` proved; \"proved by\" is the method that closed them; "
            f"the last two columns run the branch and bound and the ILP alone on the largest batch (its time when "
            f"proven, else the gap between the best found and the bound).\n\n{HEADER}\n"
            + "\n".join(line(r) for r in rows) + "\n\n" + summary(rows, args.budget, args.cell_budget))
    write_section("bench_solver", body, "## Solver table (`bench_solver.py`)")
    out = HERE / "results" / "solver.json"
    out.write_text(json.dumps({"budget": args.budget, "cell_budget": args.cell_budget, "load": load,
                               "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
