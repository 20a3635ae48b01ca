"""The explorer's report (version 2): one JSON document with the structure every view draws.

A report holds, for one batch of a capture (or one program): the bytecode, the WSP graph as
data (dependency and fuse-preventing edges with their kinds and reasons), a partition per
algorithm x cost model with its cost, status and weight edges, the search trace of the
optimal algorithm (capped), the generated kernels of the selected partition, timings once
measured, a profile of the selected partition's blocks once made (time and roofline), the
one palette every view colours with, and the status of the work (complete,
phase, pending partitions, interrupted). It carries no drawing: each view (the JupyterLab
extension, the kernel's static fallback, :mod:`fusionlab.explore.dot`) builds its own from the data.
``docs/explorer-protocol.md`` is the contract; :func:`validate_report` checks a report against
the JSON Schema in ``fusionlab/data/explorer.schema.json``. Instruction and block numbers are
1-based everywhere.

Reports are built piece by piece (:class:`ReportParts`): the program and graph sections once
per batch, one entry per partition as each finishes (so a display can show the cheap ones
while the searches run), then :func:`assemble_report`. :func:`get_report` does all of it at
once.

Examples
--------
>>> from fusionlab.ir.examples import fig3
>>> r = get_report(fig3(), algorithms=["linear", "greedy"], cost_models=["bohrium"])
>>> r["version"], len(r["program"]["instructions"]), [p["cost_elements"] for p in r["partitions"]]
(2, 17, [62, 38])
>>> r["status"]["complete"], r["status"]["phase"]
(True, 'done')
>>> validate_report(r)
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Callable, Mapping, Sequence

from fusionlab.support.budget import UNLIMITED, Budget, BudgetExceeded
from fusionlab.ir.bytecode import OpFamily, Program
from fusionlab.costs import Evaluator, access_info, block_info, cost_label, get_cost_model
from fusionlab.passes.reroll import REROLL_SECONDS
from fusionlab.passes.rewrites import RewritePass
from fusionlab.explore.hof.view import get_program_contractions
from fusionlab.partition import MergeCache, PartitionResult, partition
from fusionlab.ir.text import format_instruction, format_program
from fusionlab.analysis.wsp import PartitionState, WSPGraph
from fusionlab.pipeline.config import PipelineConfig
from fusionlab.pipeline.preparing import Prepared, prepare
from fusionlab.explore.palette import REPORT_BLOCKS, block_colour
from fusionlab.explore.notices import ReportNotice, report_notice, rewrite_notice

__all__ = [
    "MIME_TYPE", "SCHEMA_VERSION", "DEFAULT_ALGORITHMS", "DEFAULT_COST_MODELS", "CHEAP_ALGORITHMS",
    "EXACT_ALGORITHMS", "DEFAULT_TRACE_LIMIT", "PALETTE", "get_report", "partition_entry", "pending_entry",
    "validate_report", "get_schema", "ReportOptions", "ReportParts", "assemble_report", "run_partition",
    "weight_edges", "unit_label", "format_cost", "work_order", "get_program_data", "get_graph_data",
    "get_code_data", "trace_data", "SAVED_BYTES", "BATCH_KEYS", "fuses", "batch_section", "with_saved_batches", "waterfall_blocks", "batch_summaries", "batch_menu", "batch_label", "BATCHES_LISTED", "find_entry",
    "is_first_display_ready",
]

MIME_TYPE = "application/vnd.fusionlab.explorer+json"
SCHEMA_VERSION = 2
DEFAULT_ALGORITHMS = ("singleton", "linear", "unintrusive", "greedy", "optimal", "ilp")
DEFAULT_COST_MODELS = ("bohrium", "max_contract", "max_locality", "robinson")
# shown first: fast on every program (the display appears once these are known)
CHEAP_ALGORITHMS = ("singleton", "linear", "greedy")
# searches that prove optimality; cut by the budget they return their best so far, not proven
EXACT_ALGORITHMS = ("optimal", "ilp", "exact", "exhaustive")
# Search-trace nodes kept in a report by default: a saved report of a few hundred
# instructions stays well under 1 MB (the whole trace is fetched over the kernel channel).
DEFAULT_TRACE_LIMIT = 200
# ... and at most this many bytes of them (JSON), whatever the node limit.
TRACE_BYTES = 200_000
# Weight edges kept per partition (the heaviest); all are counted in ``weights_total``.
MAX_WEIGHT_EDGES = 60
# Above this many blocks the weight edges are not computed (pairs x path searches).
MAX_BLOCKS_FOR_WEIGHTS = 120
# Graph edges kept in the report (dependencies first); ``edges_total`` counts all.
MAX_GRAPH_EDGES = 6000

PALETTE: dict[str, Any] = {
    # the first block colours; blocks past these follow the same rule (fusionlab.explore.palette)
    "blocks": [block_colour(k) for k in range(1, REPORT_BLOCKS + 1)],
    "edges": {"dependency": "#475569", "forbidden": "#dc2626", "weight": "#16a34a", "contracted": "#7c3aed"},
}

def unit_label(model: Any) -> str:
    """The unit every view prints after a cost of ``model``: :func:`fusionlab.costs.cost_label`.

    >>> unit_label("max_contract"), unit_label("bohrium")
    ('arrays not contracted (lower is better)', 'bytes')
    """
    return cost_label(model)


def format_cost(value: float | None) -> str:
    """A cost as every view prints it: whole numbers with thousands separators, others with
    four significant digits; ``None`` (not computed) as a dash.

    >>> format_cost(144000016), format_cost(-3.0), format_cost(0.125), format_cost(None)
    ('144,000,016', '-3', '0.125', '—')
    """
    if value is None:
        return "—"
    v = float(value)
    if not math.isfinite(v):
        return str(v)
    if v == int(v) and abs(v) < 1e18:
        return f"{int(v):,}"
    if abs(v) >= 1e4:
        return f"{v:,.0f}"
    return f"{v:.4g}"


class ReportOptions(dict):
    """Per-algorithm limits of the searches run for a report (a plain dict, so it serialises).

    >>> ReportOptions()["optimal"]["time_limit"]
    2.0
    """

    def __init__(self, optimal_time: float = 2.0, optimal_nodes: int = 20_000, ilp_time: float = 10.0,
                 ilp_variables: int = 4000) -> None:
        super().__init__(optimal={"time_limit": optimal_time, "max_nodes": optimal_nodes},
                         ilp={"time_limit": ilp_time, "max_variables": ilp_variables})


def _options(algorithm: str, options: Mapping[str, Any]) -> dict[str, Any]:
    return dict(options.get(algorithm, {}))


def run_partition(program: Program, algorithm: str, model: Any, *, cache: MergeCache | None,
                  options: Mapping[str, Any], budget: Budget = UNLIMITED, graph: WSPGraph | None = None,
                  known: PartitionResult | None = None) -> tuple[PartitionResult | None, str]:
    """Run one algorithm under one model within ``budget``; returns ``(result, status)``.

    ``status`` is ``"done"``, or ``"budget"`` when the budget (or the search's own node or
    time limit) cut an exact search or the deadline passed while a heuristic ran: the result
    is then its best so far. With no result at all (the budget ran out before the algorithm
    had one) the result is ``None``. ``graph`` (the program's WSP graph, when the caller
    has it) saves each algorithm building it again; ``cache`` answers repeated batches and
    keeps only finished results. ``known``: the best partition the report has under this
    model (greedy's): a search cut before it matched that returns it
    (:func:`fusionlab.partition.at_least_known`), so no report shows a search worse than greedy.

    >>> from fusionlab.ir.examples import fig3
    >>> r, status = run_partition(fig3(), "greedy", "bohrium", cache=None, options={})
    >>> status, r.kernels
    ('done', 4)
    """
    opts = _options(algorithm, options)
    key_of = getattr(model, "cache_key", None)
    key = MergeCache.key(program, algorithm, key_of(), opts) if cache is not None and key_of is not None else None
    if key is not None:
        got = cache.get(key, program)
        if got is not None:
            return got, _status(algorithm, got)
    try:
        budget.check(f"{algorithm} under {getattr(model, 'name', model)}")
        # the graph is given (not the program): this function keeps the cache itself
        result = partition(graph if graph is not None else program, algorithm, model, budget=budget, known=known,
                           **opts)
    except BudgetExceeded:
        return None, "budget"
    status = _status(algorithm, result)
    if key is not None and status == "done" and not result.budget_cut:
        cache.put(key, result)
    return result, status


def _status(algorithm: str, result: PartitionResult) -> str:
    if algorithm in EXACT_ALGORITHMS:  # a search stopped by its node limit is not proven either
        return "done" if result.proven_optimal else "budget"
    return "budget" if result.budget_cut else "done"


def _instruction(program: Program, i: int, text: str | None = None) -> dict[str, Any]:
    ins = program[i]
    return {
        "n": i + 1,
        "opcode": ins.opcode.name,
        "family": ins.family,
        "text": format_instruction(ins) if text is None else text,
        "outputs": [v.base.name for v in ins.outputs],
        "inputs": [v.base.name for v in ins.views_in],
        "domain": list(ins.domain) if ins.domain is not None else None,
        "system": ins.opcode in OpFamily.SYSTEM,
    }


def get_program_data(program: Program) -> dict[str, Any]:
    """The ``program`` section: declarations, instructions and the bytecode text.

    Each instruction is formatted once, for its entry and the text alike (80,000
    instructions of LU at n = 200 took 4.1 s formatted twice)."""
    lines = [format_instruction(ins) for ins in program]
    head = format_program(Program(program.bases, ()), declare_unused=True)
    return {
        "text": "\n".join(([head] if head else []) + lines),
        "bases": [{"name": b.name, "dtype": b.dtype, "shape": list(b.shape)} for b in program.bases],
        "instructions": [_instruction(program, i, lines[i]) for i in range(len(program))],
    }


def get_graph_data(graph: WSPGraph, max_edges: int = MAX_GRAPH_EDGES, conflicts: bool = True) -> dict[str, Any]:
    """The ``graph`` section: dependency edges and fuse-preventing edges with reasons.

    Pairs forbidden by iteration shape alone are left out (each instruction's ``domain``
    says its shape). At most ``max_edges`` edges are kept, dependencies first;
    ``edges_total`` counts them all. ``conflicts=False``: the dependencies alone (the
    fuse-preventing edges were not listed within a budget).
    """
    deps_all = sorted(graph.dependencies.items())
    drawn = graph.drawn_conflicts() if conflicts else []
    deps = [{"source": u + 1, "target": v + 1, "kind": d.kind.name.lower(), "base": d.base}
            for (u, v), d in deps_all[:max_edges]]
    room = max(max_edges - len(deps), 0)
    forbidden = [{"a": u + 1, "b": v + 1, "reason": r.name.lower(), "explanation": r.value, "detail": detail}
                 for u, v, r, detail in drawn[:room]]
    return {"dependencies": deps, "forbidden": forbidden, "edges_total": len(deps_all) + len(drawn)}


def weight_edges(result: PartitionResult, graph: WSPGraph | None = None, model: Any = None,
                 budget: Budget = UNLIMITED) -> list[tuple[int, int, float]]:
    """``(block a, block b, saving)`` (0-based blocks) for every pair of ``result``'s blocks
    whose merge is legal (Lemma 1) and saves under ``model`` (default: the result's),
    heaviest first. Empty above :data:`MAX_BLOCKS_FOR_WEIGHTS` blocks; stops at the budget
    (raising :class:`~fusionlab.support.budget.BudgetExceeded`).

    >>> from fusionlab.ir.examples import fig3
    >>> weight_edges(partition(fig3(), "singleton"))[0]   # COPY A + ADD A, A, D[:-1]: 8 elements
    (0, 4, 64.0)
    """
    graph = graph or WSPGraph(result.program)
    blocks = result.blocks
    if len(blocks) > MAX_BLOCKS_FOR_WEIGHTS:
        return []
    ev = Evaluator(get_cost_model(model if model is not None else result.cost_model), graph)
    state = PartitionState(graph, blocks)
    ids = [state.block_of[b[0]] for b in blocks]
    masks = [sum(1 << i for i in b) for b in blocks]
    out = []
    for a in range(len(blocks)):
        budget.check("weight edges")
        for b in range(a + 1, len(blocks)):
            others = [] if ev.additive else [m for k, m in enumerate(masks) if k not in (a, b)]
            s = ev.saving(masks[a], masks[b], others)
            if s > 1e-9 and state.can_merge(ids[a], ids[b]):
                out.append((a, b, float(s)))
    out.sort(key=lambda e: (-e[2], e[0], e[1]))
    return out


def find_entry(report: Mapping[str, Any], algorithm: str, cost_model: str) -> dict[str, Any]:
    """The report's partition entry for ``algorithm`` under ``cost_model``."""
    for p in report["partitions"]:
        if p["algorithm"] == algorithm and p["cost_model"] == cost_model:
            return p
    have = ", ".join(f"{p['algorithm']}/{p['cost_model']}" for p in report["partitions"])
    raise KeyError(f"no partition {algorithm}/{cost_model} in the report; it has {have}")


def _number(x: float | None) -> float | int | None:
    if x is None:
        return None
    x = float(x)
    if not math.isfinite(x):
        return None
    return int(x) if x == int(x) and abs(x) < 2 ** 53 else x


def partition_entry(result: PartitionResult, graph: WSPGraph | None = None, *, status: str = "done",
                    model: Any = None, accesses: Any = None, budget: Budget = UNLIMITED) -> dict[str, Any]:
    """One element of the ``partitions`` section for ``result`` (``status`` as
    :func:`run_partition` says; ``model``: the cost model object, for user models)."""
    program = result.program
    graph = graph or WSPGraph(program)
    accesses, synced = accesses or access_info(program)
    entry = result.to_dict()
    entry["cost"] = _number(result.cost)
    entry["unit"] = unit_label(model if model is not None else result.cost_model)
    entry["kernels"] = result.kernels
    entry["contracted"] = [sorted(block_info(program, b, accesses, synced).contracted) for b in result.blocks]
    entry.setdefault("notes", [])
    entry["cache_hit"] = result.cache_hit
    entry["status"] = status
    bound = getattr(result, "bound", None)
    entry["bound"] = None if result.proven_optimal or bound is None else _number(bound)
    try:
        weights = weight_edges(result, graph, model, budget)
    except BudgetExceeded:
        weights = []
        entry["notes"].append("weight edges not computed: the time budget ran out")
    entry["weights"] = [{"a": a + 1, "b": b + 1, "saving": _number(s)} for a, b, s in weights[:MAX_WEIGHT_EDGES]]
    entry["weights_total"] = len(weights)
    return entry


def pending_entry(algorithm: str, cost_model: Any, status: str = "pending", note: str = "") -> dict[str, Any]:
    """A partition entry with no result (yet): ``pending``, or ``budget``, ``interrupted``,
    ``error`` when the work stopped before the algorithm had a partition."""
    return {"algorithm": algorithm, "cost_model": getattr(cost_model, "name", cost_model), "blocks": [],
            "cost": None, "cost_elements": None, "legal": True, "proven_optimal": False, "seconds": 0.0,
            "unit": unit_label(cost_model), "kernels": 0, "contracted": [], "notes": [note] if note else [],
            "cache_hit": False, "status": status, "bound": None, "weights": [], "weights_total": 0}


def trace_data(result: PartitionResult | None, limit: int | None = DEFAULT_TRACE_LIMIT,
               max_bytes: int | None = TRACE_BYTES) -> dict[str, Any] | None:
    """The ``trace`` section from ``result``'s search trace: at most ``limit`` nodes, and
    ``max_bytes`` of JSON for the weight edges and the nodes together (a node lists the
    edges it cuts and keeps: on a big program each is kilobytes); when the edges alone take
    more than half of it, neither edges nor nodes are kept. All when ``limit`` is ``None``.
    ``truncated`` says when nodes were explored but are not in it."""
    if result is None or result.trace is None:
        return None
    t = result.trace.to_dict()
    t["cost_model"] = result.cost_model
    if limit is not None and len(t["nodes"]) > limit:
        t["nodes"] = t["nodes"][:limit]
    if limit is not None and max_bytes is not None:
        size = len(json.dumps(t["edges"]))
        if size > max_bytes // 2:  # nodes index the edges: with no room for both, neither is kept
            t["edges"], t["nodes"], size = [], [], 0
        for k, node in enumerate(t["nodes"]):
            size += len(json.dumps(node))
            if size > max_bytes:
                t["nodes"] = t["nodes"][:k]
                break
    t["recorded"] = len(t["nodes"])
    t["truncated"] = t["recorded"] < t["explored"]
    return t


def get_code_data(program: Program, blocks: Sequence[Sequence[int]], min_size: int | None = None,
                  budget: Budget = UNLIMITED) -> list[dict[str, Any]]:
    """The ``code`` section: per block, the generated Numba source or why NumPy runs it."""
    from fusionlab.backend.numba.codegen import Unsupported, get_kernel
    from fusionlab.backend.numba.plan import DEFAULT_MIN_SIZE, plan

    budget.check("code generation")
    p = plan(program, blocks, DEFAULT_MIN_SIZE if min_size is None else min_size)
    position = {i: k for k, b in enumerate(blocks) for i in b}
    out = []
    for bp in p.blocks:
        budget.check("code generation")
        k = position[bp.instructions[0]]
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
    out = _pieces_joined(out)
    out.sort(key=lambda c: c["block"])
    return out


def _pieces_joined(code: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One entry per block of the partition: the kernels of a block compiled in pieces
    (:func:`~fusionlab.backend.numba.plan.compiler_sized`) one after another in one source."""
    from fusionlab.backend.numba.plan import MAX_KERNEL_ARRAYS

    by_block: dict[int, list[dict[str, Any]]] = {}
    for c in code:
        by_block.setdefault(c["block"], []).append(c)
    out = []
    for k, parts in by_block.items():
        if len(parts) == 1:
            out.append(parts[0])
            continue
        note = (f"runs as {len(parts)} kernels of at most {MAX_KERNEL_ARRAYS} arrays each: Numba's compile time "
                "grows faster than the kernel past that (docs/backend.md, \"Kernel size\")")
        sources = [f"# piece {j + 1} of {len(parts)}: instructions {c['instructions']}"
                   + (f" (NumPy: {c['reason']})" if c["runs"] == "numpy" else "") + "\n" + (c["source"] or "")
                   for j, c in enumerate(parts)]
        out.append({"block": k, "instructions": sorted(i for c in parts for i in c["instructions"]),
                    "source": "\n\n".join(sources),
                    "runs": "numba" if any(c["runs"] == "numba" for c in parts) else "numpy",
                    "reason": "; ".join(x for x in [note] + [c["reason"] for c in parts if c["reason"]] if x),
                    "contracted": sorted({a for c in parts for a in c["contracted"]})})
    return out


def work_order(algorithms: Sequence[str], models: Sequence[str], selected: tuple[str, str]
               ) -> list[tuple[str, str]]:
    """The order partitions are computed in: the cheap algorithms under the selected model
    (the first display waits for these), the selected partition, the rest under the
    selected model, then the other models (heuristics before exact searches, the exact
    searches algorithm by algorithm).

    >>> work_order(["singleton", "greedy", "optimal"], ["bohrium", "robinson"], ("greedy", "robinson"))[:3]
    [('singleton', 'robinson'), ('greedy', 'robinson'), ('optimal', 'robinson')]
    """
    chosen = selected[1] if selected[1] in models else models[0]
    first = [(a, chosen) for a in algorithms if a in CHEAP_ALGORITHMS]
    if selected[0] in algorithms and (selected[0], chosen) not in first:
        first.append((selected[0], chosen))
    rest_chosen = [(a, chosen) for a in algorithms if (a, chosen) not in first]
    others = [m for m in models if m != chosen]
    heuristics = [(a, m) for m in others for a in algorithms if a not in EXACT_ALGORITHMS]
    # the branch and bound under every model before the ILPs: it often proves at once, and
    # what it leaves of a shared time goes to the searches after it
    exact = [(a, m) for a in algorithms if a in EXACT_ALGORITHMS for m in others]
    return first + rest_chosen + heuristics + exact


def is_first_display_ready(done: Sequence[tuple[str, str]], algorithms: Sequence[str],
                           selected_model: str) -> bool:
    """Whether the cheap partitions under the selected model are all known."""
    return all((a, selected_model) in done for a in algorithms if a in CHEAP_ALGORITHMS)


def rewrite_notices(prepared: Prepared, batch: int = 0, shown: bool = False) -> list[dict[str, Any]]:
    """Notices saying what a run rewrote of batch ``batch`` (from 0) of ``prepared`` before
    partitioning it: the records its preparing passes returned (dead parts of writes,
    :mod:`fusionlab.passes.deadwrites`; arrays freed early, :mod:`fusionlab.passes.deadbases`),
    and a ``budget`` notice when the budget stopped the dead-writes pass at or before this
    batch. No pass runs here. ``shown``: the batch shown is the prepared one (the explorer's
    own batches are the pipeline's), so the notices say what was rewritten, not what a run
    will rewrite.

    >>> from fusionlab import parse
    >>> from fusionlab.support.budget import Budget
    >>> p = parse("ARRAY a float64[4]\\nCOPY a, 0\\nCOPY a, 1.0\\nSYNC a")
    >>> rewrite_notices(prepare(p, PipelineConfig()))[0]["detail"][:60]
    'a run rewrites this batch before partitioning it: instructio'
    >>> [n["kind"] for n in rewrite_notices(prepare(p, PipelineConfig(), Budget(0.0)))]
    ['budget']
    """
    what = "rewritten before partitioning, as a run does" if shown else \
        "a run rewrites this batch before partitioning it"
    # the batch this one is in, or one before it, is where the pass stopped: none of it was analysed
    stopped = any(r.by is RewritePass.DEAD_WRITES and r.batch is not None and r.batch <= batch for r in prepared.cut)
    notices = [report_notice(ReportNotice.DEAD_WRITES_CUT, (
        "the dead writes of this batch were not analysed within the time budget: what a run rewrites "
        "before partitioning it is not listed (rerun with a larger --budget)"))] if stopped else []
    return notices + [rewrite_notice(ReportNotice.REWRITE, r, f"{what}: ")
                      for r in prepared.rewrites if r.batch == batch]


@dataclass
class ReportParts:
    """The pieces of a report of one batch, filled as the work goes.

    ``entries`` maps ``(algorithm, cost model)`` to a finished partition entry;
    ``results`` to its :class:`PartitionResult`; missing pairs are pending.
    """

    program: Program
    graph: WSPGraph | None
    program_data: dict[str, Any]
    graph_data: dict[str, Any]
    entries: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    results: dict[tuple[str, str], PartitionResult] = field(default_factory=dict)
    accesses: Any = None
    code: dict[tuple[tuple[int, ...], ...], list[dict[str, Any]]] = field(default_factory=dict)
    notices: list[dict[str, Any]] = field(default_factory=list)
    graph_seconds: float = 0.0
    graph_pending: bool = False
    contractions: list[dict[str, Any]] | None = None
    #: the replays and waterfalls made so far, by cost model and partitions (``steps_data``)
    steps: dict[tuple[Any, ...], dict[str, Any] | None] = field(default_factory=dict)

    def steps_data(self, entries: Sequence[Mapping[str, Any]], models: Mapping[str, Any],
                   budget: Budget | None = None) -> dict[str, Any]:
        """The ``steps`` section: greedy's merges replayed under each cost model, and the
        fusion waterfall between each two different partitions of a cost model
        (:mod:`fusionlab.explore.waterfall`). Each is made once per partition pair and kept;
        ``budget`` bounds those made by this call (default: :data:`STEPS_SECONDS`), and past it,
        or past :data:`STEPS_INSTRUCTIONS` instructions, a pair is listed as not computed."""
        from fusionlab.explore.waterfall import steps_data, waterfall

        budget = Budget(STEPS_SECONDS) if budget is None else budget
        done = [e for e in entries if e.get("status") in ("done", "budget") and e.get("blocks") and e.get("legal")]
        replays, falls, skipped = [], [], []
        too_big = self.graph is None or len(self.program) > STEPS_INSTRUCTIONS

        listed = 0

        def made(key: tuple[Any, ...], make: Callable[[], dict[str, Any]]) -> dict[str, Any] | None:
            nonlocal listed
            if key not in self.steps:
                if too_big or budget.expired():
                    return None
                try:
                    self.steps[key] = make()
                except BudgetExceeded:
                    return None
            got = self.steps[key]
            if listed + len(got["steps"]) > STEPS_TOTAL:   # the saved report's size budget
                return None
            listed += len(got["steps"])
            return got

        for name in dict.fromkeys(e["cost_model"] for e in done):
            mine = [e for e in done if e["cost_model"] == name]
            model = models.get(name, name)
            greedy_entry = next((e for e in mine if e["algorithm"] == "greedy" and e["status"] == "done"), None)
            if greedy_entry is not None:
                blocks = _blocks_key(greedy_entry)
                got = made(("replay", name, blocks), lambda: _replay_data(self.graph, model, blocks, budget))
                if got is None:
                    skipped.append(f"greedy's merges under {name}")
                elif got.get("matches", True):
                    replays.append({"cost_model": name, **got})
            # one waterfall per two different partitions (algorithms with the same blocks share one)
            groups: dict[tuple[tuple[int, ...], ...], list[str]] = {}
            for e in mine:
                groups.setdefault(_blocks_key(e), []).append(e["algorithm"])
            keys = list(groups)
            for i, a in enumerate(keys):
                for b in keys[i + 1:]:
                    got = made(("waterfall", name, a, b), lambda a=a, b=b: steps_data(waterfall(
                        self.graph, waterfall_blocks({"blocks": a}), waterfall_blocks({"blocks": b}),
                        model, budget=budget)))
                    if got is None:
                        skipped.append(f"{groups[a][0]} to {groups[b][0]} under {name}")
                    else:
                        falls.append({"cost_model": name, "a": groups[a], "b": groups[b], **got})
        why = ""
        if too_big and done:
            why = (f"not made for a batch of more than {STEPS_INSTRUCTIONS:,} instructions "
                   "(explore a smaller window to replay it step by step)")
        elif skipped:
            why = (f"not made within {budget.seconds:g} s or {STEPS_TOTAL:,} steps: " + "; ".join(skipped[:4])
                   + (" …" if len(skipped) > 4 else ""))
        return {"replays": replays, "waterfalls": falls, "limit": STEPS_LISTED, "not_made": why}

    def contractions_data(self) -> list[dict[str, Any]]:
        """The ``contractions`` section (computed once: every arrangement of each CONTRACT)."""
        if self.contractions is None:
            self.contractions = get_program_contractions(self.program)
        return self.contractions

    @classmethod
    def before_graph(cls, program: Program) -> "ReportParts":
        """The program section alone, for a display shown while the graph is being built."""
        return cls(program, None, get_program_data(program), {"dependencies": [], "forbidden": [], "edges_total": 0},
                   graph_pending=True)  # the accesses come with the graph: no partition needs them before

    @classmethod
    def of(cls, program: Program, graph: WSPGraph | None = None, budget: Budget = UNLIMITED,
           listing: "ReportParts | None" = None, prepared: Prepared | None = None,
           batch: int = 0) -> "ReportParts":
        """The program and graph sections of ``program``. Building the WSP graph checks
        ``budget`` (a budget already spent builds none): when it runs out there, ``graph``
        is ``None``, the graph section is empty and a notice says so (no partition can be
        computed without the graph). ``listing``: the parts :meth:`before_graph` made for
        the same program, whose program section is reused (formatting 80,000 instructions
        takes seconds). ``prepared``: the pipeline's preparing passes on the run this
        program is batch ``batch`` of; what they rewrote of it is listed in notices
        (:func:`rewrite_notices`; none without it)."""
        started = time.perf_counter()
        if listing is not None and listing.program is program:
            data, accesses = listing.program_data, listing.accesses
        else:
            data, accesses = get_program_data(program), None
        if graph is None:
            try:
                budget.check("WSP graph")
                graph = WSPGraph(program, budget=budget)
            except BudgetExceeded:
                empty = {"dependencies": [], "forbidden": [], "edges_total": 0}
                why = (f"the WSP graph of these {len(program)} instructions was not built within the time budget"
                       f"{'' if budget.seconds is None else f' of {budget.seconds:g} s'}, so no partition was "
                       "computed: rerun with a larger --budget, or explore fewer instructions (a smaller loop)")
                return cls(program, None, data, empty, accesses=accesses,  # no partition: no accesses needed
                           notices=[report_notice(ReportNotice.GRAPH_CUT, why)])
        notices = []
        try:
            graph.drawn_conflicts(budget)
            graph_data = get_graph_data(graph)
        except BudgetExceeded:
            graph_data = get_graph_data(graph, conflicts=False)
            notices.append(report_notice(ReportNotice.CONFLICTS_CUT, (
                "the fuse-preventing edges of this batch were not listed within the time budget: the graph shows "
                "its dependencies only (the partitions know every edge; rerun with a larger --budget)")))
        return cls(program, graph, data, graph_data, accesses=accesses or access_info(program),
                   graph_seconds=time.perf_counter() - started,
                   notices=notices + (rewrite_notices(prepared, batch) if prepared is not None else []))

    def code_fits(self, budget: Budget) -> bool:
        """Whether code generation is likely to end within ``budget``: it builds the WSP
        graph again (``execute.plan`` takes no graph or budget), so it needs about the time
        the graph took here, twice for safety."""
        return budget.remaining() >= 2 * self.graph_seconds + 0.2

    def add(self, algorithm: str, model: Any, result: PartitionResult | None, status: str,
            budget: Budget = UNLIMITED, note: str = "") -> dict[str, Any]:
        """Record the outcome of one algorithm under one model."""
        name = getattr(model, "name", model)
        if result is None:
            entry = pending_entry(algorithm, model, status, note)
        else:
            self.results[(algorithm, name)] = result
            entry = partition_entry(result, self.graph, status=status, model=model, accesses=self.accesses,
                                    budget=budget)
            if note:
                entry["notes"].append(note)
        self.entries[(algorithm, name)] = entry
        return entry

    def code_for(self, blocks: Sequence[Sequence[int]], budget: Budget = UNLIMITED) -> list[dict[str, Any]]:
        """The ``code`` section of a partition (kept per blocks: selecting again is free)."""
        key = tuple(tuple(b) for b in blocks)
        if key not in self.code:
            self.code[key] = get_code_data(self.program, blocks, budget=budget)
        return self.code[key]


#: the steps section is made for batches of at most this many instructions
STEPS_INSTRUCTIONS = 1500
#: seconds a report's assembly may spend on new replays and waterfalls
STEPS_SECONDS = 1.0
#: steps listed per replay or waterfall (the rest are counted)
STEPS_LISTED = 400
#: steps listed in a report in all (about 55 bytes each: the saved report's size budget of 1 MB)
STEPS_TOTAL = 1500


def _blocks_key(entry: Mapping[str, Any]) -> tuple[tuple[int, ...], ...]:
    return tuple(sorted(tuple(sorted(b)) for b in entry["blocks"]))


def waterfall_blocks(entry: Mapping[str, Any]) -> list[list[int]]:
    """An end of a waterfall of the ``steps`` section, as that section's waterfall took it:
    ``entry``'s blocks sorted, 0-based (a measured waterfall times the same steps).

    >>> waterfall_blocks({"blocks": [[3], [2, 1]]})
    [[0, 1], [2]]
    """
    return [[x - 1 for x in blk] for blk in _blocks_key(entry)]


def _replay_data(graph: WSPGraph, model: Any, blocks: tuple[tuple[int, ...], ...], budget: Budget) -> dict[str, Any]:
    """Greedy's replay as the report lists it; ``matches`` says whether it ends on the
    explorer's greedy partition (a row computed with other options may not)."""
    from fusionlab.explore.waterfall import greedy_replay, steps_data

    steps = greedy_replay(graph, model, budget=budget)
    parts = [{i} for i in range(graph.n)]
    where = list(range(graph.n))
    for st in steps:   # the partition greedy ends on
        k, j = where[st.into[0]], where[st.moved[0]]
        parts[k] |= parts[j]
        for i in parts[j]:
            where[i] = k
        parts[j] = set()
    got = tuple(sorted(tuple(sorted(i + 1 for i in p)) for p in parts if p))
    return {**steps_data(steps, STEPS_LISTED), "matches": got == blocks}


def assemble_report(
    parts: ReportParts,
    *,
    algorithms: Sequence[str],
    cost_models: Sequence[Any],
    selected: tuple[str, str],
    report_id: str = "",
    name: str = "",
    source: str = "",
    batches: Sequence[Mapping[str, Any]] | None = None,
    batch: int = 0,
    notices: Sequence[Mapping[str, Any]] = (),
    extra: Sequence[dict[str, Any]] = (),
    status: Mapping[str, Any] | None = None,
    trace: dict[str, Any] | None = None,
    code: Sequence[Mapping[str, Any]] = (),
    timings: Mapping[str, Any] | None = None,
    profile: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The report from its parts: partitions not in ``parts.entries`` are pending.
    ``profile``: the selected partition's per-block profile
    (:meth:`fusionlab.pipeline.profiling.Profile.to_dict`), null until one is made."""
    names = [getattr(m, "name", m) for m in cost_models]
    by_name = dict(zip(names, cost_models))
    entries = [parts.entries.get((a, m)) or pending_entry(a, by_name[m]) for m in names for a in algorithms]
    entries += [dict(e) for e in extra]
    pending = [[e["algorithm"], e["cost_model"]] for e in entries if e["status"] == "pending"]
    st = {"complete": not pending, "phase": "done" if not pending else "pending", "pending": pending,
          "interrupted": False, "budget_seconds": None, "elapsed_seconds": 0.0}
    st.update(status or {})
    st["pending"] = pending
    all_notices = [dict(n) for n in notices] + [dict(n) for n in parts.notices]
    contractions = parts.contractions_data()
    listed = list(batches) if batches is not None else [
        {"index": 0, "instructions": len(parts.program), "signature": _short(parts.program), "same_as": None}]
    if len(parts.program) == 0:
        all_notices.append(report_notice(ReportNotice.EMPTY, "the program has no instruction: nothing to partition "
                                         "(record NumPy array operations to explore their fusion)"))
    return {
        "schema": "fusionlab.explorer",
        "version": SCHEMA_VERSION,
        "id": report_id,
        "name": name,
        "source": source,
        "status": st,
        "palette": PALETTE,
        "batches": listed,
        "batch": batch,
        # additive (older views list ``batches``): the menu, summarised past BATCHES_LISTED
        "batch_menu": batch_menu(listed, batch),
        "notices": all_notices,
        "program": parts.program_data,
        "graph": parts.graph_data,
        "algorithms": list(algorithms),
        "cost_models": names,
        "partitions": entries,
        "selected": {"algorithm": selected[0], "cost_model": selected[1]},
        "trace": trace,
        "code": list(code),
        "timings": dict(timings) if timings else None,
        # additive (older reports have none): each block's time beside the time model's, a roofline
        "profile": dict(profile) if profile else None,
        # additive: present only when the program has contractions (older views ignore it)
        **({"contractions": contractions} if contractions else {}),
        # additive: greedy's merges one by one and the waterfalls between partitions
        # (made once every partition is in: a progressive display does not wait for them)
        "steps": parts.steps_data(entries, by_name, None if not pending else Budget(0.0)),
    }


#: a saved report's size budget (its JSON text): other batches are kept while they fit
SAVED_BYTES = 1_000_000
#: the keys of a report that belong to its batch (the rest are the cell's): a saved batch's section
BATCH_KEYS = ("batch", "status", "notices", "program", "graph", "partitions", "selected", "trace", "code",
              "timings", "profile", "steps", "contractions", "measured_waterfalls")


def fuses(report: Mapping[str, Any]) -> bool:
    """Whether the selected partition of ``report`` fuses anything (a block of two or more
    instructions): a batch worth keeping in a saved notebook.

    >>> fuses({"selected": {"algorithm": "g", "cost_model": "b"},
    ...        "partitions": [{"algorithm": "g", "cost_model": "b", "blocks": [[1, 2], [3]]}]})
    True
    """
    sel = report["selected"]
    entry = next((e for e in report["partitions"] if e["algorithm"] == sel["algorithm"]
                  and e["cost_model"] == sel["cost_model"]), None)
    return entry is not None and any(len(b) > 1 for b in entry.get("blocks") or [])


def batch_section(report: Mapping[str, Any]) -> dict[str, Any]:
    """The part of ``report`` that is its batch's (:data:`BATCH_KEYS`): what a saved notebook
    keeps of a batch the user viewed, so that its batch menu shows it with no kernel. Its
    search trace is left out (the kernel fetches the whole trace)."""
    section = {k: report[k] for k in BATCH_KEYS if k in report}
    section["trace"] = None
    return section


def with_saved_batches(report: dict[str, Any], others: Sequence[Mapping[str, Any]],
                       limit: int = SAVED_BYTES) -> dict[str, Any]:
    """``report`` with ``saved_batches``: the sections (:func:`batch_section`) of the other
    batches computed that fuse something (viewed, or computed for the saved notebook), in batch order, while the report's JSON stays within
    ``limit`` bytes; ``saved_batches_left_out`` counts those that did not fit. Additive: a
    view that knows neither key shows the current batch only.

    >>> r = {"batch": 0, "selected": {"algorithm": "g", "cost_model": "b"}, "partitions": []}
    >>> other = {**r, "batch": 2, "partitions": [{"algorithm": "g", "cost_model": "b", "blocks": [[1, 2]]}]}
    >>> [s["batch"] for s in with_saved_batches(dict(r), [other])["saved_batches"]]
    [2]
    >>> with_saved_batches(dict(r), [other], limit=10)["saved_batches_left_out"]
    1
    """
    # the two keys counted as if every batch were left out: the bound holds whatever is kept
    size = len(json.dumps({**report, "saved_batches": [], "saved_batches_left_out": len(others)}))
    kept, left = [], 0
    for other in sorted(others, key=lambda o: o["batch"]):
        if other["batch"] == report["batch"] or not fuses(other):
            continue
        section = batch_section(other)
        more = len(json.dumps(section)) + 2
        if size + more > limit:
            left += 1
            continue
        kept.append(section)
        size += more
    report["saved_batches"] = kept
    report["saved_batches_left_out"] = left
    return report


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
    budget: Budget | None = None,
    trace_limit: int | None = DEFAULT_TRACE_LIMIT,
    report_id: str = "",
    prepared: Prepared | None = None,
) -> dict[str, Any]:
    """Compute every partition of ``program`` and assemble the report at once.

    Parameters
    ----------
    program
        The batch to explore.
    algorithms, cost_models
        The grid of partitions computed (cost models by name, or objects with a ``name``).
    selected
        ``(algorithm, cost_model)`` shown first; defaults to greedy (or the first
        algorithm) under the first cost model.
    batches, batch, notices, source, name
        Context from a capture: the batch list, which one this is, capture notices.
    cache
        A :class:`~fusionlab.partition.MergeCache`: repeated batches cost nothing.
    options
        Per-algorithm options (limits), default :class:`ReportOptions`.
    extra
        Further partitions to include (a manual partition, for example).
    timings
        A ``timings`` section measured earlier, kept as it is.
    budget
        One :class:`~fusionlab.support.budget.Budget` for all the work; searches cut by it are
        marked ``budget`` (best so far, not proven), partitions never started too.
    trace_limit
        Search-trace nodes kept (all when ``None``).
    report_id
        The report's ``id`` (the display id of the explorer showing it).
    prepared
        The pipeline's preparing passes on the run ``program`` is batch ``batch`` of: its
        notices list what they rewrote of it. By default the pipeline prepares ``program``
        alone as ``run`` would (within :data:`~fusionlab.passes.reroll.REROLL_SECONDS` of
        ``budget``, as a comparison's rows), and ``batch`` is its only one.
    """
    options = ReportOptions() if options is None else options
    cache = cache if cache is not None else MergeCache()
    budget = budget or Budget(None)
    models = [get_cost_model(m) for m in cost_models]
    by_name = {m.name: m for m in models}
    if selected is None:
        selected = ("greedy" if "greedy" in algorithms else algorithms[0], models[0].name)
    if prepared is None:   # what a run of this program does before partitioning it
        prepared, rewritten = prepare(program, PipelineConfig(), budget.child(REROLL_SECONDS)), 0
    else:
        rewritten = batch
    parts = ReportParts.of(program, prepared=prepared, batch=rewritten)
    for alg, m in work_order(algorithms, list(by_name), selected):
        result, status = run_partition(program, alg, by_name[m], cache=cache, options=options,
                                       budget=budget.child(_options(alg, options).get("time_limit")),
                                       graph=parts.graph, known=parts.results.get(("greedy", m)))
        parts.add(alg, by_name[m], result, status, budget)
    extras = [partition_entry(r, parts.graph, model=by_name.get(r.cost_model), accesses=parts.accesses)
              for r in extra]
    chosen = parts.results.get(selected) or next((r for r in extra if (r.algorithm, r.cost_model) == selected),
                                                 None)
    if chosen is None and (selected[0] not in list(algorithms) + [r.algorithm for r in extra]
                           or selected[1] not in by_name):
        raise ValueError(f"selected {selected[0]}/{selected[1]} is not among the partitions computed; choose an "
                         f"algorithm of {list(algorithms)} and a cost model of {[m.name for m in models]}")
    code: list[dict[str, Any]] = []
    if chosen is not None:
        try:
            code = parts.code_for(chosen.blocks, budget)
        except BudgetExceeded:
            code = []
    return assemble_report(
        parts, algorithms=algorithms, cost_models=models, selected=selected, report_id=report_id, name=name,
        source=source, batches=batches, batch=batch, notices=notices, extra=extras,
        status={"budget_seconds": budget.seconds, "elapsed_seconds": round(budget.elapsed(), 3)},
        trace=trace_data(parts.results.get(("optimal", selected[1])), trace_limit), code=code, timings=timings,
    )


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


#: batches listed one by one in a batch menu; past them, batches alike are listed once
BATCHES_LISTED = 50


def batch_label(b: Mapping[str, Any], alike: int = 0) -> str:
    """The menu's label of batch summary ``b`` (:func:`batch_summaries`), with ``alike``
    other batches like it (listed with it, not apart).

    >>> batch_label({"index": 7, "instructions": 3, "same_as": 1})
    'batch 8: 3 instructions — same as batch 2 (partitions cached)'
    """
    same = f" — same as batch {b['same_as'] + 1} (partitions cached)" if b["same_as"] is not None else ""
    more = f" (and {alike} more batches like it)" if alike else ""
    return f"batch {b['index'] + 1}: {b['instructions']} instructions{same}{more}"


def batch_menu(batches: Sequence[Mapping[str, Any]], current: int) -> list[dict[str, Any]]:
    """The batch menu (the report's ``batch_menu``, which the ipywidgets view and the
    JupyterLab extension both list): every batch when there are at most
    :data:`BATCHES_LISTED`; else each kind of batch once (its first, with how many are like
    it) and the ``current`` one. A loop reading a float per iteration makes thousands of
    batches, nearly all alike (the merge cache partitions them once): 5,000 entries in a
    menu is a list nobody reads.

    >>> bs = [{"index": k, "instructions": 3, "same_as": None if k < 2 else k % 2} for k in range(60)]
    >>> [(m["index"], m["alike"]) for m in batch_menu(bs, 7)]
    [(0, 29), (1, 29), (7, 0)]
    >>> batch_menu(bs, 7)[0]["label"]
    'batch 1: 3 instructions (and 29 more batches like it)'
    >>> len(batch_menu(bs[:50], 7))
    50
    """
    if len(batches) <= BATCHES_LISTED:
        return [{"index": b["index"], "alike": 0, "label": batch_label(b)} for b in batches]
    alike: dict[int, int] = {}
    for b in batches:
        if b["same_as"] is not None:
            alike[b["same_as"]] = alike.get(b["same_as"], 0) + 1
    return [{"index": b["index"], "alike": alike.get(b["index"], 0), "label": batch_label(b, alike.get(b["index"], 0))}
            for b in batches if b["same_as"] is None or b["index"] == current]


def get_schema() -> dict[str, Any]:
    """The report's JSON Schema."""
    return json.loads(resources.files("fusionlab").joinpath("data/explorer.schema.json").read_text())


def validate_report(report: Mapping[str, Any]) -> None:
    """Raise :class:`jsonschema.ValidationError` unless ``report`` follows the schema."""
    import jsonschema

    jsonschema.validate(report, get_schema())
