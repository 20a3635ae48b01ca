"""Time the partition algorithms; writes the figures into benchmarks/README.md.

Run with ``make bench`` (or ``.venv/bin/python benchmarks/bench_partition.py``). Each figure
is the median (and minimum) of repeated runs in this one process, after a warm-up; graph
construction is timed apart from the algorithms. Tests never assert on these times.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

from fusionlab.examples import fig3, random_program
from fusionlab.partition import partition
from fusionlab.wsp import WSPGraph

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


def main() -> None:
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
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "partition.json").write_text(json.dumps(
        [dict(zip(["program", "instructions", "algorithm", "cost_elements", "median_s", "min_s", "blocks", "proven"], r))
         for r in rows], indent=1))
    sys.stdout.write(text + "\n")


if __name__ == "__main__":
    main()
