"""Time the student cells of ``tests/data/student_cells/`` under ``%%fuse`` against plain NumPy.

Each cell runs in a fresh process (a fresh IPython shell with ``%load_ext fusionlab``), once
plainly and once under ``%%fuse`` with the default options, and the time of every phase is
recorded by wrapping the functions that do it (inclusive seconds, CPU of this process and
wall): capture, reroll, the WSP graph, dead writes (the rewrite notices), the listing (the
program section), the batches' summaries, the partitions, the display (bundle: report,
HTML, text, layout), then the ipywidgets explorer built afterwards. Writes
``benchmarks/results/student_cells.json`` and prints a table.

Usage: ``python benchmarks/bench_student_cells.py [--small] [CELL ...]`` (``--small``: the
sizes of each cell's ``# small:`` line, as the tests run them).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CELLS = ROOT / "tests" / "data" / "student_cells"
OUT = ROOT / "benchmarks" / "results" / "student_cells.json"
PHASES = ("capture", "reroll", "wsp_graph", "dead_writes", "listing", "batches", "partitions", "display",
          "widgets")


def cell_source(path: Path, small: bool) -> str:
    """The cell's text; ``small``: its upper-case constants set as its ``# small:`` line says."""
    text = path.read_text()
    if not small:
        return text
    found = re.search(r"^# small:(.*)$", text, re.M)
    for assignment in (found.group(1).split() if found else []):
        name, value = assignment.split("=")
        text = re.sub(rf"^{name} = .*$", f"{name} = {value}", text, count=1, flags=re.M)
    return text


def _child(path: str, small: bool) -> dict[str, Any]:
    """Run one cell plainly and under %%fuse in this process; the figures."""
    import contextlib
    import io

    from IPython.testing.globalipapp import get_ipython
    from IPython.utils.capture import capture_output

    import fusionlab.explore.jupyter.display as display
    import fusionlab.explore.jupyter.magic as magic
    import fusionlab.explore.jupyter.session as session
    import fusionlab.explore.report as report

    source = cell_source(Path(path), small)
    plain_ns: dict[str, Any] = {}
    w0, c0 = time.perf_counter(), time.process_time()
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            exec(compile(source, "cell", "exec"), plain_ns)
        except Exception:  # noqa: BLE001  (a cell may raise on purpose)
            pass
    plain = {"wall": time.perf_counter() - w0, "cpu": time.process_time() - c0}

    spent = {p: 0.0 for p in PHASES}
    walls = {p: 0.0 for p in PHASES}
    calls = {p: 0 for p in PHASES}

    def timed(phase: str, fn: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            t, w = time.process_time(), time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[phase] += time.process_time() - t
                walls[phase] += time.perf_counter() - w
                calls[phase] += 1
        return wrapper

    magic.capture = timed("capture", magic.capture)
    session.reroll_batches = timed("reroll", session.reroll_batches)
    report.WSPGraph = timed("wsp_graph", report.WSPGraph)
    # the notices list the pipeline's records: the time is the session's preparing passes
    session.prepare = timed("dead_writes", session.prepare)
    report.get_program_data = timed("listing", report.get_program_data)
    session.batch_summaries = timed("batches", session.batch_summaries)
    session.run_partition = timed("partitions", session.run_partition)
    display.ExplorerView.show = timed("display", display.ExplorerView.show)
    display.ExplorerView.update = timed("display", display.ExplorerView.update)

    ip = get_ipython()
    ip.run_line_magic("load_ext", "fusionlab")
    w0, c0 = time.perf_counter(), time.process_time()
    raised = None
    with capture_output() as out:
        try:
            ip.run_cell_magic("fuse", "", source)
        except Exception as exc:  # noqa: BLE001  (the cell's own error, raised as a plain cell's)
            raised = type(exc).__name__
    fused = {"wall": time.perf_counter() - w0, "cpu": time.process_time() - c0}
    res = ip.user_ns.get("_fuse")
    if res is not None:
        t = time.process_time()
        res.widgets(show=False)
        spent["widgets"] = time.process_time() - t
    notices = [] if res is None else [f"{n['kind']}: {n['message'][:160]}" for n in res.report()["notices"]]
    return {
        "plain": plain, "fused": fused, "raised": raised, "phases_cpu": {k: round(v, 3) for k, v in spent.items()},
        "phases_wall": {k: round(v, 3) for k, v in walls.items()},
        "calls": calls,
        "instructions": None if res is None else sum(len(b) for b in res.capture.batches),
        "batches": None if res is None else len(res.batches),
        "explored_instructions": None if res is None else len(res.program),
        "stderr": [line[:200] for line in out.stderr.splitlines() if line.startswith("fusionlab")],
        "notices": notices,
    }


def main(argv: list[str]) -> None:
    small = "--small" in argv
    names = [a for a in argv if not a.startswith("--")]
    paths = sorted(CELLS.glob("*.py"))
    if names:
        paths = [p for p in paths if p.stem in names]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    rows = []
    for path in paths:
        code = (f"import json, sys; sys.path.insert(0, {str(ROOT / 'benchmarks')!r}); "
                f"from bench_student_cells import _child; print('@@' + json.dumps(_child({str(path)!r}, {small})))")
        started = time.perf_counter()
        try:
            proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                                  timeout=300)
            line = next((x for x in proc.stdout.splitlines() if x.startswith("@@")), None)
            row = json.loads(line[2:]) if line else {"error": proc.stderr[-800:]}
        except subprocess.TimeoutExpired:
            row = {"error": "timed out after 300 s"}
        row["cell"] = path.stem
        row["process_seconds"] = round(time.perf_counter() - started, 2)
        rows.append(row)
        _write(rows, small, names)   # after each cell: a run cut short keeps its rows
        if "error" in row:
            print(f"{path.stem:24} ERROR {row['error'][-300:]}", flush=True)
            continue
        ph = row["phases_cpu"]
        print(f"{path.stem:24} plain {row['plain']['wall']:7.2f}s fused {row['fused']['wall']:6.2f}s "
              f"(cpu {row['fused']['cpu']:6.2f}) ins {row['instructions'] or 0:>6} batches {row['batches'] or 0:>5} | "
              + " ".join(f"{k[:5]}={v:.2f}/{row['phases_wall'][k]:.1f}" for k, v in ph.items() if v >= 0.05),
              flush=True)
    print(f"written {_write(rows, small, names)}; load {os.getloadavg()}")


def _write(rows: list[dict[str, Any]], small: bool, names: list[str]) -> Path:
    load = os.getloadavg()
    doc = {"load_average": [round(x, 2) for x in load], "small": small, "phases": list(PHASES),
           "unit": "seconds (phases_cpu / phases_wall: CPU and wall of the kernel process, inclusive; "
                   "plain/fused: wall and CPU of the whole cell)",
           "rows": rows}
    out = OUT if not small else OUT.with_name("student_cells_small.json")
    if names:
        out = out.with_name(out.stem + "_partial.json")
    out.write_text(json.dumps(doc, indent=1) + "\n")
    return out


if __name__ == "__main__":
    main(sys.argv[1:])
