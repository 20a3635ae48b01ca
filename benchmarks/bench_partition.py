"""Time the partition algorithms; writes the figures into benchmarks/README.md.

Run with ``make bench`` (or ``.venv/bin/python benchmarks/bench_partition.py [--part
algorithms|scaling|all]``). Each figure of the algorithms table is the median (and
minimum) of repeated runs in this one process, after a warm-up; graph construction is
timed apart from the algorithms. The scaling tables time each phase of an algorithm (by
the phases it announces to its budget) on long straight-line programs: a 2-D heat stencil
captured for many iterations and a scalar loop of zero-dimensional instructions, plus the
heat cell of issue 12 (500 x 500, 20 iterations) under every cost model, and the ILP's
real time limit. Tests never assert on these times.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

from fusionlab import parse
from fusionlab.support.budget import Budget
from fusionlab.capture import capture
from fusionlab.ir.examples import fig3, random_program
from fusionlab.partition import partition
from fusionlab.analysis.wsp import WSPGraph

from _report import write_section

HERE = Path(__file__).resolve().parent


def timed(fn, repeat: int) -> tuple[float, float, object]:
    fn()  # warm-up
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), min(times), out


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()}"


def algorithms_table() -> list[dict[str, object]]:
    rows = []
    programs = [("Fig. 3", fig3())] + [(f"random {n}", random_program(n, seed=1)) for n in (50, 200, 1000)]
    for label, program in programs:
        g_med, g_min, graph = timed(lambda: WSPGraph(program), 5)
        rows.append((label, len(program), "(build WSP graph)", "", g_med, g_min, "", ""))
        for algorithm in ("linear", "greedy", "optimal", "ilp"):
            if algorithm == "ilp" and len(program) > 50:
                continue  # the ILP has a variable per pair: meant for small programs
            options = {"time_limit": 10.0} if algorithm in ("optimal", "ilp") else {}
            repeat = 3 if algorithm in ("optimal", "ilp") and len(program) > 20 else 7
            med, mn, result = timed(lambda: partition(graph, algorithm, "bohrium", **options), repeat)
            proven = "yes" if result.proven_optimal else ("no (budget 10 s)" if algorithm == "optimal" else "")
            rows.append((label, len(program), algorithm, result.cost_elements, med, mn, result.kernels, proven))
    header = (
        "| program | instructions | algorithm | cost (elements) | median s | min s | blocks | proven optimal |\n"
        "| --- | ---: | --- | ---: | ---: | ---: | ---: | --- |\n"
    )
    rows_text = "".join(
        f"| {a} | {n} | {alg} | {c} | {med:.4f} | {mn:.4f} | {k} | {p} |\n" for a, n, alg, c, med, mn, k, p in rows
    ).rstrip("\n")
    body = (
        f"Measured {time.strftime('%Y-%m-%d')} on {machine()}; Bohrium cost model; "
        "medians of 7 runs (3 for optimal and ilp above 20 instructions) after a warm-up.\n\n"
        + header + rows_text
    )
    text = write_section("bench_partition", body, "## Partition algorithms (`bench_partition.py`)")
    sys.stdout.write(text + "\n")
    return [dict(zip(["program", "instructions", "algorithm", "cost_elements", "median_s", "min_s", "blocks", "proven"],
                     r)) for r in rows]


# -- scaling: phases on long programs -------------------------------------------------------

HEAT_CELL = """
import numpy as np
n = {n}
u = np.zeros((n, n))
u[0, :] = 1.0
for _ in range({iters}):
    v = u.copy()
    v[1:-1, 1:-1] = u[1:-1, 1:-1] + 0.1 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4 * u[1:-1, 1:-1])
    u = v
"""

HEAT_IN_PLACE = """
import numpy as np
u = np.zeros((40, 40))
u[0, :] = 1.0
for _ in range(20):
    u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
"""


def heat(n: int, iters: int):
    """The largest batch capture records for the heat cell."""
    return max(capture(HEAT_CELL.format(n=n, iters=iters)).batches, key=len)


def scalar_loop(n: int):
    """What capture recorded for ``for i in range(n): s = s + a[i] * a[i]`` before it learnt
    to stop recording such loops (8 zero-dimensional instructions per element)."""
    decl = [f"ARRAY a float64[{n}]", "ARRAY s0 float64[]"]
    body = ["RANGE a", "COPY s0, 0"]
    for i in range(n):
        decl += [f"ARRAY x{i} float64[]", f"ARRAY y{i} float64[]", f"ARRAY p{i} float64[]", f"ARRAY s{i + 1} float64[]"]
        body += [f"COPY x{i}, a[{i}]", f"COPY y{i}, a[{i}]", f"MULTIPLY p{i}, x{i}, y{i}", f"DEL x{i}", f"DEL y{i}",
                 f"ADD s{i + 1}, s{i}, p{i}", f"DEL p{i}", f"DEL s{i}"]
    return parse("\n".join(decl + body + [f"SYNC s{n}"]))


def phased(graph: WSPGraph, algorithm: str, model: str, **options: object) -> tuple[float, list[tuple[str, float]], object]:
    """Run once; the wall time and the time of each phase the algorithm announced (the
    last one includes packaging the result: legality and cost)."""
    marks: list[tuple[str, float]] = []
    budget = Budget(None, on_phase=lambda name: marks.append((name, time.perf_counter())))
    t0 = time.perf_counter()
    result = partition(graph, algorithm, model, budget=budget, **options)
    t1 = time.perf_counter()
    phases = []
    edges = [("set-up", t0)] + marks + [("end", t1)]
    for (name, start), (_, stop) in zip(edges, edges[1:]):
        phases.append((name, stop - start))
    return t1 - t0, phases, result


def load() -> str:
    try:
        return "load average " + " ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        return "load unknown"


def scaling_tables() -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    cell = heat(500, 20)
    programs = [("heat cell 500x500, 20 iterations", cell)]
    programs += [(f"heat 64x64, {it} iterations", heat(64, it)) for it in (59, 294, 882)]
    programs += [(f"scalar loop, {n} elements", scalar_loop(n)) for n in (125, 625, 1875)]
    lines = []
    for label, program in programs:
        t = time.perf_counter()
        graph = WSPGraph(program)
        g_time = time.perf_counter() - t
        cases = ([(a, m) for a in ("singleton", "linear", "greedy") for m in ("bohrium", "max_contract", "max_locality",
                                                                              "robinson")] + [("unintrusive", "bohrium")]
                 if program is cell else [(a, "bohrium") for a in ("linear", "unintrusive", "greedy")])
        for algorithm, model in cases:
            wall, phases, r = phased(graph, algorithm, model)
            text = ", ".join(f"{name} {sec:.3f}" for name, sec in phases if sec >= 0.0005)
            lines.append(f"| {label} | {len(program)} | {g_time:.3f} | {algorithm} | {model} | {wall:.3f} | "
                         f"{r.kernels} | {text} |")
            rows.append({"program": label, "instructions": len(program), "graph_s": g_time, "algorithm": algorithm,
                         "model": model, "seconds": wall, "blocks": r.kernels, "phases": phases})
            print(lines[-1], flush=True)
    # the ILP's time limit: wall time of the whole call against the limit asked
    ilp_lines = []
    program = max(capture(HEAT_IN_PLACE).batches, key=len)
    graph = WSPGraph(program)
    for limit in (2.0, 10.0):
        wall, phases, r = phased(graph, "ilp", "bohrium", time_limit=limit, max_variables=4000)
        note = next((n for n in r.notes if "HiGHS" in n), "")
        ilp_lines.append(f"| heat in place 40x40, 20 iterations | {len(program)} | {limit:g} | {wall:.2f} | "
                         f"{note.replace('|', '/')} |")
        rows.append({"program": "heat in place (ilp)", "instructions": len(program), "algorithm": "ilp",
                     "time_limit": limit, "seconds": wall, "notes": list(r.notes), "phases": phases})
        print(ilp_lines[-1], flush=True)
    body = (
        f"Measured {time.strftime('%Y-%m-%d %H:%M')} on {machine()}, {load()} at the end (the machine is shared: "
        "other jobs ran). One run each; the graph is built once per program (column \"graph s\"). Phases are "
        "what each algorithm announces to its budget; the last one includes packaging the result.\n\n"
        "| program | instructions | graph s | algorithm | cost model | total s | blocks | phases (s) |\n"
        "| --- | ---: | ---: | --- | --- | ---: | ---: | --- |\n" + "\n".join(lines)
        + "\n\nThe ILP's time limit is the whole call's (seeds, model, solver); HiGHS runs in a solver process "
        "asked for the time left and killed at the deadline.\n\n"
        "| program | instructions | time limit s | wall s | solver |\n| --- | ---: | ---: | ---: | --- |\n"
        + "\n".join(ilp_lines)
    )
    text = write_section("bench_partition_scaling", body, "## Partition scaling (`bench_partition.py`)")
    sys.stdout.write(text + "\n")
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=["algorithms", "scaling", "all"], default="all",
                        help="which tables to measure (default: all)")
    args = parser.parse_args(argv)
    out = HERE / "results" / "partition.json"
    old = json.loads(out.read_text()) if out.exists() else {}
    results = old if isinstance(old, dict) else {"algorithms": old}
    if args.part in ("algorithms", "all"):
        results["algorithms"] = algorithms_table()
    if args.part in ("scaling", "all"):
        results["scaling"] = scaling_tables()
    (HERE / "results").mkdir(exist_ok=True)
    out.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
