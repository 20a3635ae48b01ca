"""Running a sweep: on Dask distributed (a local cluster by default, or a scheduler's
address), or serially in this process.

Partitioning tasks run freely on every worker. Timing tasks run after them, each holding
the Dask worker resource ``machine-<hostname>`` (capacity 1, declared by one worker per
machine), so two timings never share a machine's cores and no partitioning of the sweep
runs beside them. The client stores each row as its task finishes (one Parquet file,
written atomically): workers need no shared file system, and a killed worker loses nothing
already stored; Dask runs its unfinished task again on another worker (or on the one its
nanny restarts). A row is done when the store holds it from one of the cluster's machines:
rerunning a sweep computes only the rows still missing, and the same spec run on another
machine's cluster computes that machine's rows (a comparison across machines). A timed
spec counts only timed rows as done: it times (and replaces) the rows a partition-only
sweep stored.
"""

from __future__ import annotations

import html
import inspect
import logging
import os
import socket
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from fusionlab.tools.sweep.spec import SweepSpec, Task, load_spec
from fusionlab.tools.sweep.store import Store
from fusionlab.tools.sweep.tasks import (
    machine_info, machine_resource, partition_row, partition_task, timed_row,
)

__all__ = ["run_sweep", "SweepReport", "local_cluster", "SweepError", "Progress"]


class SweepError(RuntimeError):
    """A sweep that cannot start on this cluster; the message says how to fix it."""


@dataclass
class SweepReport:
    """What a sweep did.

    ``executed`` counts the rows computed and stored by this call; ``stored_before`` those
    found in the store already; ``failed`` the tasks Dask gave up on (their rows are not
    stored, so the next run tries them again); ``seconds`` the time from the first task
    submitted to the last row stored.
    """

    spec: str
    store: str
    total: int
    stored_before: int
    executed: int
    errors: int
    failed: list[str]
    seconds: float
    machines: list[str]
    dashboard: str | None = None
    timed: bool = False
    executed_keys: list[tuple[Any, ...]] = field(default_factory=list, repr=False)
    #: ``seconds`` is the rows' computation; this adds connecting (or starting and stopping
    #: a local cluster) and finding the rows already stored
    wall_seconds: float = 0.0

    def __str__(self) -> str:
        where = ", ".join(self.machines)
        lines = [f"sweep {self.spec}: {self.total} rows, {self.stored_before} already stored, {self.executed} "
                 f"computed in {self.seconds:.1f} s on {where}" + (" (timed)" if self.timed else "")
                 + (f"; {self.wall_seconds:.1f} s in all" if self.wall_seconds - self.seconds > 0.5 else ""),
                 f"store: {self.store} ({self.errors} rows with an error)"]
        if self.failed:
            lines.append(f"{len(self.failed)} tasks failed and are not stored (rerun to retry): "
                         + "; ".join(self.failed[:5]))
        return "\n".join(lines)


class Progress:
    """A progress bar: a line on a terminal (stderr), an ipywidgets bar in Jupyter, or nothing.

    ``mode`` is ``"auto"`` (Jupyter when running in a Jupyter kernel, else text), ``"text"``,
    ``"notebook"`` or ``"none"``. On a stream that is not a terminal, text mode writes a line
    per tenth of the rows instead of redrawing one line.

    >>> import io
    >>> bar = Progress(20, "text", stream=io.StringIO())
    >>> for done in range(1, 21):
    ...     bar.update("partitioning", done)
    >>> print(bar.stream.getvalue())  # doctest: +ELLIPSIS
    partitioning: 2/20 rows, 0 errors, ... s
    ...
    partitioning: 20/20 rows, 0 errors, ... s
    """

    def __init__(self, total: int, mode: str = "auto", stream: Any = None) -> None:
        self.total, self.done, self.errors = total, 0, 0
        self.stream = stream or sys.stderr
        self.started = time.perf_counter()
        self.last = 0.0
        if mode == "auto":
            mode = "notebook" if _in_jupyter() else "text"
        self.mode = mode
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.printed = 0
        self.phase = ""
        self.widget: Any = None
        if mode == "notebook":
            import ipywidgets as w
            from IPython.display import display

            self.bar = w.IntProgress(min=0, max=max(total, 1), description="sweep")
            self.label = w.HTML()
            self.widget = w.HBox([self.bar, self.label])
            display(self.widget)

    def update(self, phase: str, done: int, errors: int = 0) -> None:
        """Show ``done`` of the rows finished in ``phase`` (partitioning, timing)."""
        if phase != self.phase:  # a new phase counts its rows from zero again
            self.phase, self.printed, self.last = phase, 0, 0.0
        self.done, self.errors = done, errors
        now = time.perf_counter()
        text = f"{phase}: {done}/{self.total} rows, {errors} errors, {now - self.started:.1f} s"
        if self.mode == "none":
            return
        if self.mode == "text" and not self.tty:
            # a log file gets a line per tenth, not a carriage-return animation
            tenth = done * 10 // max(self.total, 1)
            if tenth > self.printed:
                self.printed = tenth
                self.stream.write(text + "\n")
                self.stream.flush()
            return
        if now - self.last < 0.2 and done < self.total:
            return  # redraw at most five times a second
        self.last = now
        if self.mode == "notebook":
            self.bar.value = done
            self.label.value = html.escape(text)
        else:
            width = 30
            filled = int(width * done / self.total) if self.total else width
            self.stream.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {text}   ")
            self.stream.flush()

    def close(self) -> None:
        """End the bar's line on a terminal."""
        if self.mode == "text" and self.tty:
            self.stream.write("\n")
            self.stream.flush()


def _in_jupyter() -> bool:
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and hasattr(shell, "kernel")


#: Dask's worker profiler samples the frames of running tasks every few milliseconds; a
#: sampled frame keeps its local arrays alive a little longer, which could move the DEL
#: instructions capture records when an array dies. Sweep workers run without it, as a
#: precaution (docs/sweeps.md, "Determinism").
PROFILE_KEY = "distributed.worker.profile.enabled"


def _profiling() -> bool:
    import dask

    return bool(dask.config.get(PROFILE_KEY, default=False))


def local_cluster(workers: int = 2, dashboard_address: str = ":8787", processes: bool = True) -> Any:
    """A Dask cluster on this machine: ``workers`` worker processes (one thread each, under a
    nanny that restarts a killed one); the first holds the machine's timing resource.

    >>> from distributed import Client
    >>> with local_cluster(1, dashboard_address=":0") as cluster, Client(cluster) as client:
    ...     sorted(client.run(lambda: 1).values())
    [1]
    """
    from distributed import Nanny, Scheduler, SpecCluster, Worker

    if workers < 1:
        raise ValueError(f"a cluster needs at least one worker, got {workers}")
    cores = str(os.cpu_count() or 1)
    worker_cls = Nanny if processes else Worker
    specs = {}
    for k in range(workers):
        options: dict[str, Any] = {"nthreads": 1, "host": "127.0.0.1", "silence_logs": logging.ERROR}
        if processes:
            options["config"] = {PROFILE_KEY: False}
        if k == 0:
            # the timing worker: the machine's resource, and every core for the kernels it
            # times (Dask's nanny limits a worker's BLAS and OpenMP threads to one)
            options["resources"] = {machine_resource(socket.gethostname()): 1}
            if processes:
                options["env"] = {"OMP_NUM_THREADS": cores, "MKL_NUM_THREADS": cores,
                                  "OPENBLAS_NUM_THREADS": cores}
        specs[f"sweep-{k}"] = {"cls": worker_cls, "options": options}
    scheduler = {"cls": Scheduler, "options": {"dashboard_address": dashboard_address, "host": "127.0.0.1"}}
    return SpecCluster(workers=specs, scheduler=scheduler, silence_logs=logging.ERROR, name="fusionlab-sweep")


def _cluster_machines(client: Any, timed: bool, say: Callable[[str], None]) -> tuple[list[str], list[str]]:
    """The hostnames of the cluster's workers, and those that can time (one resource each)."""
    infos = client.run(machine_info)
    # newer clients list five workers unless asked for all
    every = {"n_workers": -1} if "n_workers" in inspect.signature(client.scheduler_info).parameters else {}
    workers = client.scheduler_info(**every)["workers"]
    hosts = sorted({info["hostname"] for info in infos.values()})
    holders: dict[str, list[str]] = {}
    for addr, info in infos.items():
        resources = workers.get(addr, {}).get("resources", {}) or {}
        for name, amount in resources.items():
            if name.startswith("machine-"):
                if name != machine_resource(info["hostname"]):
                    raise SweepError(f"worker {addr} on {info['hostname']} declares {name}: a worker declares "
                                     f"its own machine, --resources {machine_resource(info['hostname'])}=1")
                if amount != 1:
                    raise SweepError(f"worker {addr} declares {name}={amount:g}: declare 1, or timings will "
                                     "share the machine's cores")
                holders.setdefault(info["hostname"], []).append(addr)
    shared = {h: a for h, a in holders.items() if len(a) > 1}
    if shared:
        host, addrs = next(iter(shared.items()))
        raise SweepError(f"workers {', '.join(addrs)} all declare {machine_resource(host)}: two timings would "
                         "share the machine's cores; declare it on one worker per machine")
    sampled = sorted(addr for addr, on in client.run(_profiling).items() if on)
    if sampled:
        say(f"warning: {len(sampled)} workers run Dask's profiler, which can change the bytecode capture "
            "records (where arrays are freed); start them with DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED=False")
    if timed and not holders:
        raise SweepError("the spec times its rows, but no worker declares a machine resource: start one worker "
                         "per machine with --resources machine-$(hostname)=1 (docs/sweeps.md)")
    return hosts, sorted(holders)


def _todo(spec: SweepSpec, store: Store, machines: Iterable[str], retry_errors: bool) -> tuple[list[Task], int]:
    """The tasks whose rows no machine of the cluster has stored (or stored with an error,
    when ``retry_errors``; or stored untimed, when the spec times), and how many rows are
    stored already."""
    tasks = spec.tasks()
    machines = list(machines)

    def done(t: Task) -> bool:
        keys = [t.key[:5] + (m, t.repeat) for m in machines]
        stored = [k for k in keys if store.has(k)]
        if stored and (retry_errors or spec.timing is not None):
            # a timed spec wants timed rows: a partition-only row of the same key is replaced
            rows = [store.read(k) for k in stored]
            stored = [r for r in rows if (not retry_errors or r.get("error") is None)
                      and (spec.timing is None or r.get("timed"))]
        return bool(stored)

    todo = [t for t in tasks if not done(t)]
    return todo, len(tasks) - len(todo)


def _serial(spec: SweepSpec, store: Store, todo: list[Task], progress: Progress,
            on_row: Callable[[dict[str, Any], Path], None] | None) -> tuple[int, list[tuple[Any, ...]]]:
    errors, keys = 0, []
    for k, task in enumerate(todo):
        options = spec.options_for(task.algorithm)
        row = (timed_row(task, spec.name, partition_task(task, options), spec.timing) if spec.timing
               else partition_row(task, spec.name, options))
        path = store.write(row)
        errors += row["error"] is not None
        keys.append(task.key)
        if on_row is not None:
            on_row(row, path)
        progress.update("serial", k + 1, errors)
    return errors, keys


def _on_dask(client: Any, spec: SweepSpec, store: Store, todo: list[Task], timing_hosts: list[str],
             progress: Progress, on_row: Callable[[dict[str, Any], Path], None] | None
             ) -> tuple[int, list[tuple[Any, ...]], list[str]]:
    from distributed import as_completed

    run_id = uuid.uuid4().hex[:8]
    errors, keys, failed = 0, [], []

    def store_row(task: Task, future: Any) -> None:
        nonlocal errors
        try:
            row = future.result()
        except Exception as exc:  # Dask gave up (e.g. the task killed its worker three times)
            failed.append(f"{task.label}: {type(exc).__name__}: {exc}")
            return
        path = store.write(row)
        errors += row["error"] is not None
        keys.append(task.key)
        if on_row is not None:
            on_row(row, path)

    if spec.timing is None:
        futures = {client.submit(partition_row, t, spec.name, spec.options_for(t.algorithm), pure=False,
                                 key=f"sweep-partition-{run_id}-{t.id}"): t for t in todo}
        for done, future in enumerate(as_completed(futures), 1):
            store_row(futures[future], future)
            future.release()
            progress.update("partitioning", done, errors)
        return errors, keys, failed
    # partition first on every worker, then time with nothing else of the sweep running
    parts = {t: client.submit(partition_task, t, spec.options_for(t.algorithm), pure=False,
                              key=f"sweep-partition-{run_id}-{t.id}") for t in todo}
    for done, _ in enumerate(as_completed(list(parts.values())), 1):
        progress.update("partitioning", done, errors)
    timings = {}
    for k, (task, part) in enumerate(parts.items()):
        host = timing_hosts[k % len(timing_hosts)]  # one timing at a time per machine: a static share balances
        timings[client.submit(timed_row, task, spec.name, part, spec.timing, pure=False,
                              resources={machine_resource(host): 1},
                              key=f"sweep-timing-{run_id}-{task.id}")] = task
    for done, future in enumerate(as_completed(timings), 1):
        store_row(timings[future], future)
        future.release()
        progress.update("timing", done, errors)
    return errors, keys, failed


def run_sweep(
    spec: SweepSpec | str | Path,
    *,
    store: str | Path | None = None,
    scheduler: str | None = None,
    client: Any = None,
    workers: int = 2,
    dashboard_address: str = ":8787",
    progress: str = "auto",
    log: Callable[[str], None] | None = None,
    on_row: Callable[[dict[str, Any], Path], None] | None = None,
    retry_errors: bool = False,
) -> SweepReport:
    """Run a sweep and store its rows; rows already stored are not computed again.

    Parameters
    ----------
    spec
        A :class:`~fusionlab.tools.sweep.spec.SweepSpec` or the path of a spec file.
    store
        The store's folder; by default the spec's ``store``, else ``<spec name>-store``
        beside the spec file (or in the current folder).
    scheduler
        ``None``: a :func:`local_cluster` with ``workers`` workers; ``"serial"``: no Dask,
        every task in this process, one after another; else a Dask scheduler's address
        (``tcp://host:8786``).
    client
        An existing :class:`distributed.Client` to use instead (``scheduler`` is ignored).
    dashboard_address
        Where a local cluster serves its dashboard (``":0"``: any free port).
    progress
        ``"auto"``, ``"text"``, ``"notebook"`` or ``"none"`` (see :class:`Progress`).
    log
        Called with the dashboard link and the summary (default: print to stderr).
    on_row
        Called with each row and its file as soon as it is stored.
    retry_errors
        Compute again the rows stored with an error (by default a stored row is done,
        whatever it says).

    Examples
    --------
    >>> import tempfile
    >>> from fusionlab.tools.sweep import parse_spec
    >>> spec = parse_spec('workloads = ["fig3"]\\nalgorithms = ["greedy", "optimal"]')
    >>> report = run_sweep(spec, store=tempfile.mkdtemp(), scheduler="serial", progress="none", log=lambda s: None)
    >>> report.total, report.executed, report.errors
    (2, 2, 0)
    >>> run_sweep(spec, store=report.store, scheduler="serial", progress="none", log=lambda s: None).executed
    0
    """
    if not isinstance(spec, SweepSpec):
        spec = load_spec(spec)
    say = log or (lambda text: print(text, file=sys.stderr))
    store_path = Path(store or spec.store or (
        (Path(spec.source).parent if spec.source != "<spec>" else Path.cwd()) / f"{spec.name}-store"))
    rows = Store(store_path)
    started = time.perf_counter()
    here = [socket.gethostname()]
    # a local cluster runs on this machine alone: when its rows are all stored, start nothing
    local = client is None and scheduler in (None, "serial")
    todo, before = _todo(spec, rows, here, retry_errors) if local else ([], 0)
    failed: list[str] = []
    dashboard = None
    if local and (scheduler == "serial" or not todo):
        machines = here
        bar = Progress(len(todo), progress)
        errors, keys = _serial(spec, rows, todo, bar, on_row)
        bar.close()
    else:
        from contextlib import ExitStack

        from distributed import Client

        with ExitStack() as stack:
            if client is None:
                if scheduler is None:
                    cluster = stack.enter_context(local_cluster(workers, dashboard_address))
                    client = stack.enter_context(Client(cluster))
                else:
                    client = stack.enter_context(Client(scheduler))
            dashboard = client.dashboard_link
            say(f"Dask dashboard: {dashboard}")
            machines, timing_hosts = _cluster_machines(client, spec.timing is not None, say)
            todo, before = _todo(spec, rows, machines, retry_errors)
            bar = Progress(len(todo), progress)
            errors, keys, failed = _on_dask(client, spec, rows, todo, timing_hosts, bar, on_row)
            bar.close()
    now = time.perf_counter()
    report = SweepReport(spec.name, str(store_path), len(spec.tasks()), before, len(keys), errors, failed,
                         now - bar.started, machines, dashboard, spec.timing is not None, keys, now - started)
    say(str(report))
    return report
