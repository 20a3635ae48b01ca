"""The explorer on realistic cells: time to the first display, to the complete report, peak
memory and the size of the saved output, through the ``%%fuse`` magic's own pipeline run
headless (IPython's test shell; no browser).

Each cell runs in a fresh process (``--case NAME``) so its peak memory (``ru_maxrss``) is its
own. The display times are when the magic published the cell's display and its last in-place
update, measured from the start of the cell (capture included). Targets (issue 12): first
display within 2 s, complete report within 15 s, saved report under 1 MB.

Run: ``.venv/bin/python benchmarks/bench_explorer.py`` (writes README.md and
``results/bench_explorer.json``); ``--case heat20`` runs one cell and prints its figures.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from datetime import date
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

HEAT = """\
import numpy as np
n = 500
u = np.zeros((n, n))
u[0, :] = 100.0
for it in range({steps}):
    u[1:-1, 1:-1] = u[1:-1, 1:-1] + 0.1 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:]
                                           - 4 * u[1:-1, 1:-1])
total = float(u.sum())
"""

LISTCOMP = """\
import numpy as np
a = np.linspace(0.0, 1.0, 200)
b = np.array([np.sin(x) * 2.0 + x * x for x in a])
"""

ELEMENTWISE = """\
import numpy as np
x = np.linspace(0.0, 1.0, 2_000_000)
y = np.sin(x) * np.exp(-x) + x * x - 3.0 * x
z = np.sqrt(np.abs(y)) + 1.0
"""


def _workload(name: str, preset: str) -> str:
    from fusionlab.workloads import get_workload

    return get_workload(name).script(preset)


CASES: dict[str, tuple[str, Any]] = {
    "heat20": ("heat 500 x 500, 20 iterations", lambda: HEAT.format(steps=20)),
    "heat100": ("heat 500 x 500, 100 iterations", lambda: HEAT.format(steps=100)),
    "listcomp": ("list comprehension over 200 elements", lambda: LISTCOMP),
    "shallow_water": ("shallow water, medium", lambda: _workload("shallow_water", "medium")),
    "lbm": ("lattice Boltzmann D3Q19, medium", lambda: _workload("lattice_boltzmann_d3q19", "medium")),
    "elementwise": ("element-wise, 2M elements", lambda: ELEMENTWISE),
}


def run_case(name: str) -> dict[str, Any]:
    """Run one cell through ``%%fuse`` (default options) and measure it."""
    import io
    from contextlib import redirect_stdout

    from IPython.testing.globalipapp import get_ipython
    from IPython.utils.capture import capture_output

    from fusionlab.explore.report import MIME_TYPE

    cell = CASES[name][1]()
    # plain NumPy first: the reference time of the cell
    t = time.perf_counter()
    with redirect_stdout(io.StringIO()):
        exec(compile(cell, "<plain>", "exec"), {"__name__": "__main__"})
    plain = time.perf_counter() - t

    ip = get_ipython()
    ip.run_line_magic("load_ext", "fusionlab")
    stamps: list[tuple[float, dict[str, Any]]] = []
    with capture_output() as out:
        publish = ip.display_pub.publish

        def timed(data: dict[str, Any], *args: Any, **kwargs: Any) -> None:
            if MIME_TYPE in data:
                stamps.append((time.perf_counter(), data))
            publish(data, *args, **kwargs)

        ip.display_pub.publish = timed
        start = time.perf_counter()
        ip.run_cell_magic("fuse", "", cell)
        end = time.perf_counter()
    if not stamps:
        raise RuntimeError(f"{name}: the cell showed no explorer:\n{out.stdout}\n{out.stderr}")
    first, last = stamps[0], stamps[-1]
    report = last[1][MIME_TYPE]
    statuses: dict[str, int] = {}
    for p in report["partitions"]:
        statuses[p["status"]] = statuses.get(p["status"], 0) + 1
    return {
        "case": name, "title": CASES[name][0],
        "instructions": len(report["program"]["instructions"]), "batches": len(report["batches"]),
        "plain_seconds": plain, "first_display_seconds": first[0] - start,
        "complete_seconds": last[0] - start, "cell_seconds": end - start,
        "first_phase": first[1][MIME_TYPE]["status"]["phase"], "updates": len(stamps) - 1,
        "complete": report["status"]["complete"], "statuses": statuses,
        "report_bytes": len(json.dumps(report)), "output_bytes": len(json.dumps(last[1])),
        "graph_edges": report["graph"]["edges_total"],
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def run_interrupt() -> dict[str, Any]:
    """Kernel -> Interrupt during the exact searches of the heat cell (500 x 500, 20
    iterations; budget 600 s): seconds from the interrupt to the end of the cell."""
    import _thread
    import threading

    from IPython.testing.globalipapp import get_ipython
    from IPython.utils.capture import capture_output

    ip = get_ipython()
    ip.run_line_magic("load_ext", "fusionlab")
    magics = ip.magics_manager.registry["FuseMagics"]
    sent: list[tuple[float, str]] = []

    def interrupt() -> None:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            current = magics.current
            if current is not None and current.phase.startswith(("optimal", "ilp")):
                time.sleep(0.5)  # well inside the search
                sent.append((time.perf_counter(), current.phase))
                _thread.interrupt_main()
                return
            time.sleep(0.005)

    thread = threading.Thread(target=interrupt, daemon=True)
    thread.start()
    with capture_output():
        ip.run_cell_magic("fuse", "--budget 600 --optimal-time 300", HEAT.format(steps=20))
    end = time.perf_counter()
    thread.join()
    if not sent:
        raise RuntimeError("the searches ended before the interrupt was sent")
    return {"case": "interrupt", "phase": sent[0][1], "latency_seconds": end - sent[0][0]}


def table(rows: list[dict[str, Any]]) -> str:
    head = ("| cell | instructions (largest batch) | plain NumPy s | first display s | complete report s | "
            "partitions done / cut by the budget | peak memory MB | saved report KB | saved output KB |")
    lines = [head, "| --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: |"]
    for r in rows:
        st = r["statuses"]
        lines.append(
            f"| {r['title']} | {r['instructions']} | {r['plain_seconds']:.2f} | {r['first_display_seconds']:.2f} | "
            f"{r['complete_seconds']:.2f} | {st.get('done', 0)} / {st.get('budget', 0)} | {r['peak_rss_mb']:.0f} | "
            f"{r['report_bytes'] / 1024:.0f} | {r['output_bytes'] / 1024:.0f} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--case", choices=list(CASES) + ["interrupt"],
                    help="run one cell in this process and print its figures")
    ap.add_argument("--cases", default=",".join(CASES), help="comma-separated cells to run (default all)")
    args = ap.parse_args()
    if args.case:
        print(json.dumps(run_interrupt() if args.case == "interrupt" else run_case(args.case)))
        return
    from _report import write_section

    rows = []
    for name in args.cases.split(","):
        load = os.getloadavg()[0]
        got = subprocess.run([sys.executable, __file__, "--case", name], capture_output=True, text=True,
                             check=True)
        row = json.loads(got.stdout.strip().splitlines()[-1])
        row["load_before"] = load
        rows.append(row)
        print(f"{name}: first {row['first_display_seconds']:.2f} s, complete {row['complete_seconds']:.2f} s, "
              f"{row['report_bytes'] / 1024:.0f} KB, {row['peak_rss_mb']:.0f} MB (load {load:.2f})", flush=True)
    got = subprocess.run([sys.executable, __file__, "--case", "interrupt"], capture_output=True, text=True,
                         check=True)
    stop = json.loads(got.stdout.strip().splitlines()[-1])
    print(f"interrupt during {stop['phase']}: the cell ended {stop['latency_seconds']:.2f} s later", flush=True)
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "bench_explorer.json").write_text(json.dumps(rows + [stop], indent=2) + "\n")
    cpu = platform.processor() or platform.machine()
    loads = ", ".join(f"{r['load_before']:.1f}" for r in rows)
    body = (f"Measured {date.today().isoformat()} on {cpu}, {os.cpu_count()} cores, Python "
            f"{platform.python_version()}; `%%fuse` with its defaults (6 algorithms x 4 cost models, a budget of "
            f"15 s), each cell in a fresh process; times from the start of the cell (capture included). "
            f"1-minute load average before each cell: {loads}.\n\n{table(rows)}\n\n"
            f"Kernel -> Interrupt during the exact searches of the heat cell (20 iterations, `--budget 600`), "
            f"sent 0.5 s into `{stop['phase']}`: the cell ended {stop['latency_seconds']:.2f} s later, showing "
            "what was computed, marked interrupted.")
    write_section("bench_explorer", body, "## The explorer on realistic cells (`bench_explorer.py`)")
    print(table(rows))


if __name__ == "__main__":
    main()
