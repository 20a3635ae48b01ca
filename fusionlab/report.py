"""The explorer's report: one versioned JSON document with everything the views show.

A report holds, for one batch of a capture (or one program): the bytecode, the WSP graph,
a partition per algorithm x cost model with its cost, the search trace of the optimal
algorithm, the generated kernels of the selected partition, and (once measured) timings.
The Jupyter magic displays it under :data:`MIME_TYPE`; the JupyterLab extension renders it
from saved notebooks; :func:`validate_report` checks it against the JSON Schema shipped in
``fusionlab/data/explorer.schema.json``. Instruction numbers are 1-based everywhere.

Examples
--------
>>> from fusionlab.examples import fig3
>>> r = get_report(fig3(), algorithms=["linear", "greedy"], cost_models=["bohrium"])
>>> r["version"], len(r["program"]["instructions"]), [p["cost_elements"] for p in r["partitions"]]
(1, 17, [62, 38])
>>> validate_report(r)
"""

from __future__ import annotations

import hashlib
import json
from importlib import resources
from typing import Any, Mapping, Sequence

from .bytecode import OpFamily, Program
from .costs import access_info, block_info, get_cost_model
from .dot import get_dot
from .partition import MergeCache, PartitionResult, partition
from .text import format_instruction, format_program
from .wsp import Conflict, WSPGraph

__all__ = [
    "MIME_TYPE", "SCHEMA_VERSION", "DEFAULT_ALGORITHMS", "DEFAULT_COST_MODELS", "get_report",
    "partition_entry", "validate_report", "get_schema", "ReportOptions",
]

MIME_TYPE = "application/vnd.fusionlab.explorer+json"
SCHEMA_VERSION = 1
DEFAULT_ALGORITHMS = ("singleton", "linear", "unintrusive", "greedy", "optimal", "ilp")
DEFAULT_COST_MODELS = ("bohrium", "max_contract", "max_locality", "robinson")
# Graphs above this many instructions carry no DOT (the views summarise them instead).
MAX_GRAPH_INSTRUCTIONS = 300
# The search trace keeps at most this many nodes in the report (all are counted).
MAX_TRACE_NODES = 2000

UNITS = {"bohrium": "bytes", "max_contract": "contracted arrays (negated)",
         "max_locality": "locality (negated)", "robinson": "Robinson cost"}


class ReportOptions(dict):
    """Budgets of the searches run for a report (a plain dict, so it serialises).

    >>> ReportOptions()["optimal"]["time_limit"]
    2.0
    """

    def __init__(self, optimal_time: float = 2.0, optimal_nodes: int = 20_000, ilp_time: float = 10.0,
                 ilp_variables: int = 4000) -> None:
        super().__init__(optimal={"time_limit": optimal_time, "max_nodes": optimal_nodes,
                                  "trace_limit": MAX_TRACE_NODES},
                         ilp={"time_limit": ilp_time, "max_variables": ilp_variables})


def _options(algorithm: str, options: Mapping[str, Any]) -> dict[str, Any]:
    return dict(options.get(algorithm, {}))


def _instruction(program: Program, i: int) -> dict[str, Any]:
    ins = program[i]
    return {
        "n": i + 1,
        "opcode": ins.opcode.name,
        "family": ins.family,
        "text": format_instruction(ins),
        "outputs": [v.base.name for v in ins.outputs],
        "inputs": [v.base.name for v in ins.views_in],
        "domain": list(ins.domain) if ins.domain is not None else None,
        "system": ins.opcode in OpFamily.SYSTEM,
    }


def get_program_data(program: Program) -> dict[str, Any]:
    """The ``program`` section: declarations, instructions and the bytecode text."""
    return {
        "text": format_program(program),
        "bases": [{"name": b.name, "dtype": b.dtype, "shape": list(b.shape)} for b in program.bases],
        "instructions": [_instruction(program, i) for i in range(len(program))],
    }


def get_graph_data(graph: WSPGraph) -> dict[str, Any]:
    """The ``graph`` section: dependency edges and fuse-preventing edges with reasons."""
    deps = [{"source": u + 1, "target": v + 1, "kind": d.kind.name.lower(), "base": d.base}
            for (u, v), d in sorted(graph.dependencies.items())]
    forbidden = [{"a": u + 1, "b": v + 1, "reason": r.name.lower(), "explanation": r.value, "detail": detail}
                 for u, v, r, detail in graph.forbidden_edges() if r is not Conflict.SHAPE]
    return {"dependencies": deps, "forbidden": forbidden}


def partition_entry(result: PartitionResult, graph: WSPGraph | None = None, *,
                    dot: bool = True, unit: str | None = None, labels: list[str] | None = None,
                    accesses: Any = None, dot_cache: dict[Any, str] | None = None,
                    model: Any = None) -> dict[str, Any]:
    """One element of the ``partitions`` section for ``result``."""
    program = result.program
    accesses, synced = accesses or access_info(program)
    entry = result.to_dict()
    entry["unit"] = unit or UNITS.get(result.cost_model, "cost")
    entry["kernels"] = result.kernels
    entry["contracted"] = [sorted(block_info(program, b, accesses, synced).contracted) for b in result.blocks]
    entry.setdefault("notes", [])
    entry["cache_hit"] = result.cache_hit
    entry["dot"] = None
    if dot and len(program) <= MAX_GRAPH_INSTRUCTIONS:
        # weight edges depend on the cost model: one DOT text per blocks and model
        cache = {} if dot_cache is None else dot_cache
        key = (result.blocks, result.cost_model)
        if key not in cache:
            cache[key] = get_dot(result, graph, labels, model=model)
        entry["dot"] = cache[key]
    return entry


def _share_dots(entries: list[dict[str, Any]]) -> list[str]:
    # partitions with the same blocks draw the same graph: keep one DOT text, index it
    dots: list[str] = []
    index: dict[str, int] = {}
    for e in entries:
        d = e["dot"]
        if d is not None:
            if d not in index:
                index[d] = len(dots)
                dots.append(d)
            e["dot"] = index[d]
    return dots


def _trace_data(result: PartitionResult | None) -> dict[str, Any] | None:
    if result is None or result.trace is None:
        return None
    t = result.trace.to_dict()
    t["cost_model"] = result.cost_model
    t["truncated"] = t["recorded"] < t["explored"]
    return t


def get_code_data(program: Program, blocks: Sequence[Sequence[int]], min_size: int | None = None) -> list[dict[str, Any]]:
    """The ``code`` section: per block, the generated Numba source or why NumPy runs it."""
    from .codegen import Unsupported, get_kernel
    from .execute.numba_backend import DEFAULT_MIN_SIZE, plan

    p = plan(program, blocks, DEFAULT_MIN_SIZE if min_size is None else min_size)
    out = []
    for bp in p.blocks:
        k = next(j for j, b in enumerate(blocks) if tuple(sorted(b)) == bp.instructions)
        spec = bp.compiled
        if spec is None:
            # a block of lent draws still has a kernel to read; say NumPy runs it
            try:
                spec_src = get_kernel(program, bp.instructions).source
            except Unsupported:
                spec_src = None
            out.append({"block": k + 1, "instructions": bp.numbered, "source": spec_src, "runs": "numpy",
                        "reason": bp.reason, "contracted": []})
        else:
            # a one-instruction block below min_size: the run's driver (what "Compile & time"
            # runs) calls its serial kernel; only block by block does NumPy run it
            why = bp.reason if bp.kernel is not None else \
                f"serial, called by the run's driver; block by block NumPy runs it: {bp.reason}"
            out.append({"block": k + 1, "instructions": bp.numbered, "source": spec.source, "runs": "numba",
                        "reason": why, "contracted": list(spec.contracted)})
    out.sort(key=lambda c: c["block"])
    return out


def get_report(
    program: Program,
    *,
    algorithms: Sequence[str] = DEFAULT_ALGORITHMS,
    cost_models: Sequence[Any] = DEFAULT_COST_MODELS,
    selected: tuple[str, str] | None = None,
    name: str = "",
    source: str = "",
    batches: Sequence[Mapping[str, Any]] | None = None,
    batch: int = 0,
    notices: Sequence[Mapping[str, Any]] = (),
    cache: MergeCache | None = None,
    options: Mapping[str, Any] | None = None,
    extra: Sequence[PartitionResult] = (),
    timings: Mapping[str, Any] | None = None,
    dot_cache: dict[Any, str] | None = None,
) -> dict[str, Any]:
    """Compute every partition of ``program`` and assemble the report.

    Parameters
    ----------
    program
        The batch to explore.
    algorithms, cost_models
        The grid of partitions computed (cost models by name, or objects with a ``name``).
        Each partition's ``dot`` is an index into ``dots`` (partitions with the same
        blocks share a graph), or null for programs too large to draw.
    selected
        ``(algorithm, cost_model)`` shown first; defaults to greedy (or the first
        algorithm) under the first cost model.
    batches, batch, notices, source, name
        Context from a capture: the batch list, which one this is, capture notices.
    cache
        A :class:`~fusionlab.partition.MergeCache`: repeated batches cost nothing.
    options
        Per-algorithm options (budgets), default :class:`ReportOptions`.
    extra
        Further partitions to include (a manual partition, for example).
    timings
        A ``timings`` section measured earlier, kept as it is.
    dot_cache
        DOT text by blocks, kept by a caller that rebuilds reports of the same program.
    """
    options = ReportOptions() if options is None else options
    cache = cache if cache is not None else MergeCache()
    graph = WSPGraph(program)
    models = [get_cost_model(m) for m in cost_models]
    labels = [format_instruction(ins) for ins in program]
    accesses = access_info(program)
    entries, results = [], {}
    for model in models:
        for algorithm in algorithms:
            r = partition(program, algorithm, model, cache=cache, **_options(algorithm, options))
            results[(algorithm, model.name)] = r
            entries.append(partition_entry(r, graph, unit=getattr(model, "unit", "") or None,
                                           labels=labels, accesses=accesses, dot_cache=dot_cache, model=model))
    by_name = {m.name: m for m in models}
    for r in extra:
        entries.append(partition_entry(r, graph, labels=labels, accesses=accesses, dot_cache=dot_cache,
                                       model=by_name.get(r.cost_model)))
    if selected is None:
        alg = "greedy" if "greedy" in algorithms else algorithms[0]
        selected = (alg, models[0].name)
    chosen = results.get(selected) or next((r for r in extra if (r.algorithm, r.cost_model) == selected), None)
    if chosen is None:
        raise ValueError(f"selected {selected[0]}/{selected[1]} is not among the partitions computed; choose an "
                         f"algorithm of {list(algorithms)} and a cost model of {[m.name for m in models]}")
    trace = results.get(("optimal", selected[1]))
    dots = _share_dots(entries)
    return {
        "schema": "fusionlab.explorer",
        "version": SCHEMA_VERSION,
        "name": name,
        "source": source,
        "batches": list(batches) if batches is not None else [
            {"index": 0, "instructions": len(program), "signature": _short(program), "same_as": None}],
        "batch": batch,
        "notices": [dict(n) for n in notices],
        "program": get_program_data(program),
        "graph": get_graph_data(graph),
        "algorithms": list(algorithms),
        "cost_models": [m.name for m in models],
        "partitions": entries,
        "dots": dots,
        "selected": {"algorithm": selected[0], "cost_model": selected[1]},
        "trace": _trace_data(trace),
        "code": get_code_data(program, chosen.blocks),
        "timings": dict(timings) if timings else None,
    }


def _short(program: Program) -> str:
    return hashlib.sha1(program.signature().encode()).hexdigest()[:12]


def batch_summaries(batches: Sequence[Program]) -> list[dict[str, Any]]:
    """The ``batches`` section: size and signature of each batch, and the first earlier
    batch with the same signature (whose partitions the merge cache reuses)."""
    first: dict[str, int] = {}
    out = []
    for k, b in enumerate(batches):
        sig = _short(b)
        out.append({"index": k, "instructions": len(b), "signature": sig, "same_as": first.get(sig)})
        first.setdefault(sig, k)
    return out


def get_schema() -> dict[str, Any]:
    """The report's JSON Schema."""
    return json.loads(resources.files("fusionlab").joinpath("data/explorer.schema.json").read_text())


def validate_report(report: Mapping[str, Any]) -> None:
    """Raise :class:`jsonschema.ValidationError` unless ``report`` follows the schema."""
    import jsonschema

    jsonschema.validate(report, get_schema())
