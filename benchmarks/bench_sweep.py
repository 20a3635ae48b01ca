"""Time a 200-task partitioning sweep serially and on a local Dask cluster of 2 workers;
writes the figures into benchmarks/README.md ("Sweeps") and results/sweep.json.

The sweep: random programs (``fusionlab.ir.examples.random_program``) x linear, greedy x
Bohrium, Max Locality; partitions only. Serially, every task runs in this process, one
after another (``run_sweep(scheduler="serial")``); on the cluster, two worker processes
(one thread each) share them. Both write every row to a fresh store, as a real sweep does.
The cluster is started and its workers have imported fusionlab before the clock starts
(the start-up is reported apart). Rounds alternate serial and cluster runs; the figures
are medians over the rounds.

Scheduling overhead per task is the worker time a task costs beyond its computation:
(cluster seconds x workers - serial seconds) / tasks, i.e. what keeps the speed-up below
the number of workers. The round trip of an empty Dask task (submit, run, gather) is
measured apart as Dask's own share of it.

Usage: ``.venv/bin/python benchmarks/bench_sweep.py [--rounds 3] [--instructions 150]``
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from distributed import Client, wait

from fusionlab.tools.sweep import Store, local_cluster, machine_info, parse_spec, run_sweep
from fusionlab.tools.sweep.spec import SweepSpec

from _report import HERE, write_section

QUIET: dict[str, Any] = {"progress": "none", "log": lambda text: None}


def sweep_spec(instructions: int, seeds: int) -> SweepSpec:
    return parse_spec(f"""
name = "bench"
algorithms = ["linear", "greedy"]
cost_models = ["bohrium", "max_locality"]
[random]
instructions = {instructions}
seeds = {{ first = 0, count = {seeds} }}
""")


def _noop(k: int) -> int:
    return k


def empty_task_seconds(client: Client, n: int = 200) -> float:
    """Seconds per empty task: submit n no-op tasks at once, wait for all, per task."""
    futures = client.map(_noop, range(n), pure=False)
    wait(futures)
    t = time.perf_counter()
    futures = client.map(_noop, range(n), pure=False)
    wait(futures)
    seconds = time.perf_counter() - t
    del futures
    return seconds / n


def _warm(_: int = 0) -> int:
    # what a worker imports for its first partitioning task
    import fusionlab.ir.examples  # noqa: F401
    import fusionlab.partition  # noqa: F401
    import fusionlab.tools.sweep.tasks  # noqa: F401

    return os.getpid()


def one_run(spec: SweepSpec, **kw: Any) -> tuple[float, Store]:
    folder = Path(tempfile.mkdtemp(prefix="bench-sweep-"))
    t = time.perf_counter()
    report = run_sweep(spec, store=folder, **kw, **QUIET)
    seconds = time.perf_counter() - t
    assert report.executed == report.total and not report.failed and report.errors == 0, report
    return seconds, Store(folder)


def costs(store: Store) -> dict[tuple[Any, ...], float]:
    return {(r["program"], r["algorithm"], r["cost_model"]): r["cost"] for r in store.rows()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--instructions", type=int, default=150, help="instructions of each random program")
    ap.add_argument("--seeds", type=int, default=50, help="random programs (x4 tasks each)")
    args = ap.parse_args()
    spec = sweep_spec(args.instructions, args.seeds)
    tasks = len(spec.tasks())
    load_before = os.getloadavg()
    started = time.perf_counter()

    t = time.perf_counter()
    cluster = local_cluster(2, dashboard_address=":0")
    client = Client(cluster)
    client.wait_for_workers(2)
    client.run(_warm)
    startup = time.perf_counter() - t
    _warm()
    one_run(sweep_spec(args.instructions, 2), scheduler="serial")  # warm this process too

    serial, dask, empty, stores = [], [], [], []
    for _ in range(args.rounds):
        s, s_store = one_run(spec, scheduler="serial")
        d, d_store = one_run(spec, client=client)
        serial.append(s)
        dask.append(d)
        empty.append(empty_task_seconds(client, tasks))
        assert costs(s_store) == costs(d_store), "the cluster's rows differ from the serial ones"
        stores += [s_store, d_store]
    # a finished sweep run again: the resume check of every stored row
    t = time.perf_counter()
    again = run_sweep(spec, store=stores[-1].path, client=client, **QUIET)
    resume = time.perf_counter() - t
    assert again.executed == 0
    cpu = [r["partition_seconds"] for r in stores[0].rows()]
    client.close()
    cluster.close()
    for s in stores:
        shutil.rmtree(s.path)
    load_after = os.getloadavg()

    s_med, d_med, e_med = statistics.median(serial), statistics.median(dask), statistics.median(empty)
    overhead = (d_med * 2 - s_med) / tasks
    info = machine_info()
    figures = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": {k: info[k] for k in ("cpu_model", "cores", "python_version")},
        "tasks": tasks, "instructions": args.instructions, "rounds": args.rounds,
        "serial_seconds": serial, "cluster_seconds": dask, "speedup": s_med / d_med,
        "overhead_ms_per_task": overhead * 1e3, "empty_task_ms": e_med * 1e3,
        "task_ms_median": statistics.median(cpu) * 1e3, "startup_seconds": startup,
        "resume_seconds": resume, "load_before": load_before, "load_after": load_after,
        "bench_seconds": time.perf_counter() - started,
    }
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "sweep.json").write_text(json.dumps(figures, indent=2))
    busy = max(load_before[0], load_after[0]) > 0.5
    body = "\n".join([
        f"Measured {figures['date']} on {info['cpu_model']}, {info['cores']} cores, Python "
        f"{platform.python_version()}; `bench_sweep.py` ran {figures['bench_seconds']:.0f} s. "
        f"Load average {load_before[0]:.1f} before and {load_after[0]:.1f} after"
        + (" (the machine was shared with other work: the figures are disturbed by it)." if busy else "."),
        "",
        f"The sweep: {args.seeds} random programs of {args.instructions} instructions x linear, greedy x "
        f"Bohrium, Max Locality = **{tasks} partitioning tasks** (median task {figures['task_ms_median']:.0f} ms "
        "of partitioning), each row written to a fresh Parquet store. Serially: every task in one process. "
        "Cluster: `local_cluster(2)`, two worker processes of one thread, started and warmed before the clock "
        f"(start-up {startup:.1f} s). Medians of {args.rounds} alternating rounds.",
        "",
        "| run | seconds (median) | rounds | per task ms |",
        "| --- | ---: | --- | ---: |",
        f"| serial | {s_med:.2f} | {', '.join(f'{x:.2f}' for x in serial)} | {s_med / tasks * 1e3:.1f} |",
        f"| local cluster, 2 workers | {d_med:.2f} | {', '.join(f'{x:.2f}' for x in dask)} | "
        f"{d_med / tasks * 1e3:.1f} |",
        "",
        f"- **Speed-up: {s_med / d_med:.2f}x** on 2 workers.",
        f"- **Scheduling overhead: {overhead * 1e3:.1f} ms per task** of worker time ((cluster s x 2 - serial s) "
        f"/ tasks); of it, Dask's round trip of an empty task is {e_med * 1e3:.2f} ms (submitting {tasks} at once).",
        f"- Resuming the finished sweep (every row already stored: {tasks} file checks, nothing computed): "
        f"{resume:.2f} s with the cluster running.",
    ])
    print(write_section("bench_sweep", body, "## Sweeps (`bench_sweep.py`)"))


if __name__ == "__main__":
    main()
