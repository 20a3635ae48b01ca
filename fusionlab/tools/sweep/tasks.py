"""What a sweep's tasks do on a worker: load a program, partition it, time it, describe the machine.

These functions run in Dask workers (or in-process for a serial sweep). They take plain
data (a :class:`~fusionlab.tools.sweep.spec.Task`, options) and return plain dictionaries, so
that they pickle across machines; a program is loaded on the worker from its spec (files
travel as their text). A task that fails returns its row with ``error`` set instead of
raising, so that a program fusionlab cannot handle is stored once, not retried.

Examples
--------
>>> from fusionlab.tools.sweep.spec import ProgramSpec, Task
>>> task = Task(ProgramSpec("workload", "fig3"), "tiny", "optimal", "bohrium", 0)
>>> part = partition_task(task, {})
>>> part["cost_elements"], part["blocks"], part["proven_optimal"], part["error"]
(38, 4, True, None)
>>> row = make_row(task, "demo", part, None, machine_info())
>>> row["program"], row["algorithm"], row["cost_elements"], row["hostname"] == machine_info()["hostname"]
('fig3', 'optimal', 38, True)
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import io
import json
import os
import platform
import socket
import math
import time
import traceback
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Mapping

from fusionlab.tools.sweep.spec import ProgramSpec, Task, TimingSpec

if TYPE_CHECKING:
    from fusionlab.pipeline import PipelineConfig

__all__ = ["machine_info", "load_target", "task_config", "partition_task", "task_given", "timing_task", "make_row", "machine_resource",
           "partition_row", "timed_row"]


def machine_resource(hostname: str) -> str:
    """The Dask worker resource that stands for a machine's cores during a timing.

    >>> machine_resource("node7")
    'machine-node7'
    """
    return f"machine-{hostname}"


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _time_calibration() -> str | None:
    # the `time` cost model (when this fusionlab has one) keeps per-machine figures; a row
    # records them so that its predictions can be compared across machines
    from fusionlab.costs import MODEL_NAMES, get_cost_model

    if "time" not in MODEL_NAMES:
        return None
    try:
        model = get_cost_model("time")
    except Exception as exc:  # an uncalibrated machine: say so rather than fail the row
        return json.dumps({"unavailable": f"{type(exc).__name__}: {exc}"})
    cal = next((getattr(model, a) for a in ("figures", "calibration") if getattr(model, a, None) is not None), None)
    if cal is None:
        return None
    if hasattr(cal, "to_dict"):
        cal = cal.to_dict()
    elif dataclasses.is_dataclass(cal) and not isinstance(cal, type):
        cal = dataclasses.asdict(cal)
    if isinstance(cal, dict) and cal.get("source") == "default":
        # the built-in figures, the same everywhere: say so rather than repeat them in every row
        return json.dumps({"source": "default"})
    return json.dumps(cal, default=str, sort_keys=True)


@functools.lru_cache(maxsize=1)
def machine_info() -> dict[str, Any]:
    """What a row records about the machine (and software) that computed it.

    >>> info = machine_info()
    >>> sorted(info)  # doctest: +NORMALIZE_WHITESPACE
    ['cores', 'cpu_model', 'fusionlab_version', 'hostname', 'numba_threads', 'numba_version',
     'numpy_version', 'platform', 'python_version', 'time_calibration']
    >>> info["cores"] >= 1
    True
    """
    import numpy

    from fusionlab import __version__

    try:
        import numba

        numba_version, threads = numba.__version__, int(numba.config.NUMBA_NUM_THREADS)
    except ImportError:
        numba_version, threads = None, None
    return {
        "hostname": socket.gethostname(),
        "cpu_model": _cpu_model(),
        "cores": os.cpu_count() or 1,
        "platform": platform.platform(),
        "python_version": platform.python_version(),
        "numpy_version": numpy.__version__,
        "numba_version": numba_version,
        "numba_threads": threads,
        "fusionlab_version": __version__,
        "time_calibration": _time_calibration(),
    }


@functools.lru_cache(maxsize=4)
def load_target(program: ProgramSpec, preset: str) -> Any:
    """The program of a task: a :class:`~fusionlab.capture.Capture` (workloads, Python
    files) or a :class:`~fusionlab.ir.bytecode.Program` (bytecode, random programs).

    Cached per worker process: the tasks of one program under several algorithms and cost
    models capture it once. The program's own output is discarded.

    >>> load_target(ProgramSpec("random", "r", instructions=20, seed=3), "").__class__.__name__
    'Program'
    """
    if program.kind == "random":
        from fusionlab.ir.examples import random_program

        return random_program(program.instructions or 50, seed=program.seed or 0, arrays=program.arrays,
                              size=program.size)
    if program.kind == "bytecode":
        from fusionlab.ir.text import parse

        return parse(program.source)
    from fusionlab.capture import capture

    if program.kind == "workload":
        from fusionlab.workloads import get_workload

        source = get_workload(program.name).script(preset)
    else:
        source = program.source
    with contextlib.redirect_stdout(io.StringIO()):
        return capture(source, {"__name__": "__main__"})


def _batches(target: Any) -> list[Any]:
    return list(getattr(target, "batches", [target]))


def _error(exc: BaseException) -> str:
    tail = "".join(traceback.format_exception(exc)[-3:]).strip()
    return f"{type(exc).__name__}: {exc}\n{tail}"


def task_config(task: Task, options: Mapping[str, Any], min_size: int = 4096) -> PipelineConfig:
    """The pipeline's configuration of a task: ``fusionlab run``'s for its algorithm and
    cost model (every pass), with the sweep's options for the algorithm, so that a sweep row
    partitions and times what ``run`` executes; without the preparing passes for a task
    of the batches as captured (:attr:`~fusionlab.tools.sweep.spec.Task.prepared`).

    >>> from fusionlab.tools.sweep.spec import ProgramSpec, Task
    >>> c = task_config(Task(ProgramSpec("workload", "fig3"), "tiny", "optimal", "bohrium", 0), {"time_limit": 5.0})
    >>> c.algorithm, c.partition_options
    ('optimal', {'max_nodes': 20000, 'time_limit': 5.0})
    """
    from fusionlab.pipeline import PipelineConfig

    config = PipelineConfig(task.algorithm, task.cost_model, min_size, options=tuple(sorted(options.items())))
    return config if task.prepared else config.as_captured()


def partition_task(task: Task, options: dict[str, float]) -> dict[str, Any]:
    """Partition every batch of the task's program, through the pipeline ``run`` executes
    (:func:`task_config`: the batches prepared, partitioned, rematerialised); costs and
    blocks summed over batches.

    Returns the figures of the row and ``partitions`` (each prepared batch's blocks after
    rematerialisation: what a timing task plans again on the same prepared batches);
    ``error`` is the exception's text when it failed.
    """
    from fusionlab.pipeline import build

    started = time.perf_counter()
    out: dict[str, Any] = {"partition_hostname": socket.gethostname(), "error": None}
    try:
        built = build(load_target(task.program, task.preset), task_config(task, options))
        batches = built.batches
        results = [r for r in built.planned.results if r is not None]
    except Exception as exc:
        out.update(partition_seconds=time.perf_counter() - started, error=_error(exc))
        return out
    elements = [r.cost_elements for r in results]
    out.update(
        batches=len(batches),
        distinct_batches=len({b.signature() for b in batches}),
        instructions=sum(len(b) for b in batches),
        cost=float(sum(r.cost for r in results)),
        cost_elements=None if any(e is None for e in elements) else int(sum(elements)),
        blocks=sum(len(r.blocks) for r in results),
        kernels=sum(r.kernels for r in results),
        legal=all(r.legal for r in results),
        proven_optimal=all(r.proven_optimal for r in results),
        partition_seconds=time.perf_counter() - started,
        partitions=[[list(b) for b in blocks] for blocks in built.planned.blocks],
    )
    return out


def task_given(task: Task, part: dict[str, Any], timing: TimingSpec) -> tuple[PipelineConfig, dict[int, Any]]:
    """What a timing task runs: the partition ``part`` found (:func:`partition_task`), to
    be planned again on the same prepared batches (:attr:`~fusionlab.pipeline.Numbering.PREPARED`)
    with the timing's smallest parallel block; ``(config, partitions)`` for
    :func:`fusionlab.pipeline.run` or :func:`fusionlab.pipeline.build`, whose plans are those
    ``fusionlab run`` executes."""
    from fusionlab.pipeline import Numbering

    config = task_config(task, {}, timing.min_size).for_given_partitions(Numbering.PREPARED)
    return config, dict(enumerate(part["partitions"]))


def timing_task(task: Task, part: dict[str, Any], timing: TimingSpec) -> dict[str, Any]:
    """Time the task's partition (``part`` from :func:`partition_task`) against NumPy eager,
    in this process: ``timing.runs`` runs of each after a warm-up (which compiles).

    >>> from fusionlab.tools.sweep.spec import ProgramSpec, Task
    >>> task = Task(ProgramSpec("workload", "fig3"), "tiny", "singleton", "bohrium", 0)
    >>> t = timing_task(task, partition_task(task, {}), TimingSpec(runs=2))
    >>> t["timing_runs"], t["max_abs_error"], t["fused_seconds"] > 0, t["numpy_seconds"] > 0
    (2, 0.0, True, True)
    """
    from fusionlab.pipeline.comparison import compare

    out: dict[str, Any] = {"timed": True}
    if part.get("error"):
        return out
    out["timing_started"] = time.time()
    try:
        target = load_target(task.program, task.preset)
        config, partitions = task_given(task, part, timing)
        # the comparison's protocol (pipeline/comparison.py): NumPy and the fused partition
        # in interleaved rounds after their own warm-ups, the same work on both sides
        records = compare(target, [config.algorithm], [config.cost_model], repeat=timing.runs, config=config,
                          partitions=partitions, driver=timing.driver)
    except Exception as exc:
        out["error"] = _error(exc)
        return out
    out["timing_finished"] = time.time()
    numpy, fused = records[0], records[1]
    if fused.not_timed:
        out["error"] = fused.not_timed
        return out
    out.update(
        numpy_seconds=numpy.median_seconds,
        numpy_min_seconds=numpy.min_seconds,
        fused_seconds=fused.median_seconds,
        fused_min_seconds=fused.min_seconds,
        compile_seconds=fused.compile_seconds,
        speedup=None if math.isnan(fused.speedup) else fused.speedup,
        speedup_low=None if math.isnan(fused.speedup_low) else fused.speedup_low,
        speedup_high=None if math.isnan(fused.speedup_high) else fused.speedup_high,
        not_comparable=fused.not_comparable,
        draws=records.protocol["draws"],
        compiled_kernels=fused.kernels,
        fallbacks=len(fused.fallbacks),
        max_abs_error=fused.max_abs_error,
        driver=f"{timing.driver} driver",
        timing_runs=len(fused.samples),
    )
    return out


def _worker_address() -> str:
    try:
        from distributed import get_worker

        return str(get_worker().address)
    except (ImportError, ValueError):  # not in a Dask worker: a serial sweep
        return ""


def make_row(task: Task, sweep: str, part: dict[str, Any], timed: dict[str, Any] | None,
             machine: dict[str, Any]) -> dict[str, Any]:
    """One stored row: the task's key, the machine, the partition's and timing's figures."""
    row: dict[str, Any] = {
        "program": task.program.name,
        "preset": task.preset,
        "algorithm": task.algorithm,
        "cost_model": task.cost_model,
        "machine": machine["hostname"],
        "repeat": task.repeat,
        "program_kind": task.program.kind,
        "seed": task.program.seed,
        "sweep": sweep,
        "task_id": task.id,
        "prepared": task.prepared,
        "worker": _worker_address(),
        **machine,
        **{k: v for k, v in part.items() if k != "partitions"},
        "timed": False,
    }
    if timed is not None:
        error = timed.pop("error", None)
        row.update(timed)
        row["error"] = part.get("error") or error
    row["finished_at"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
    return row


def partition_row(task: Task, sweep: str, options: dict[str, float]) -> dict[str, Any]:
    """A partition-only row (the task of a sweep without ``[timing]``).

    >>> from fusionlab.tools.sweep.spec import ProgramSpec, Task
    >>> row = partition_row(Task(ProgramSpec("random", "r", instructions=20, seed=1), "", "greedy",
    ...                          "max_contract", 0), "demo", {})
    >>> row["program_kind"], row["seed"], row["timed"], row["error"], row["legal"]
    ('random', 1, False, None, True)
    """
    return make_row(task, sweep, partition_task(task, options), None, machine_info())


def timed_row(task: Task, sweep: str, part: dict[str, Any], timing: TimingSpec) -> dict[str, Any]:
    """A timed row: runs where the machine's resource is held, so nothing else of the sweep
    shares the machine's cores."""
    return make_row(task, sweep, part, timing_task(task, part, timing), machine_info())
