"""``FuseResult``: what a ``%%fuse`` cell leaves behind, as a Python object.

It holds the capture's batches and the explorer's state (batch, algorithm, cost model, a
manual partition, timings) and computes everything as data: :meth:`FuseResult.report` is
the document every view draws. The partitions are computed by :meth:`FuseResult.compute`
within one :class:`~fusionlab.support.budget.Budget`, cheap ones first, so a display can show them
while the searches run; Kernel -> Interrupt stops the work and keeps what is known. Widgets
live in :mod:`fusionlab.explore.jupyter.explorer` (an opt-in); this module imports none, so it works
(and is tested) without a front end.

Examples
--------
>>> from fusionlab.ir.examples import fig3
>>> r = FuseResult.from_program(fig3(), algorithms=["linear", "greedy"])
>>> r.partitions[("greedy", "bohrium")].cost_elements
38
>>> r.select(cost_model="robinson").selected
('greedy', 'robinson')
>>> outcome = r.merge(1, 2)          # manual mode: blocks are numbered from 1
>>> outcome.legal, outcome.reason
(False, 'FORBIDDEN')
>>> sorted(r.bundle())
['application/vnd.fusionlab.explorer+json', 'text/html', 'text/plain']
"""

from __future__ import annotations

import json
import math
import time
import uuid
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from fusionlab.support.budget import UNLIMITED, Budget, BudgetExceeded
from fusionlab.ir.bytecode import Program
from fusionlab.costs import NonMonotonicCostModel, UnsupportedCostModel, get_cost_model
from fusionlab.explore.dot import get_dot, graph_level
from fusionlab.explore.notices import ReportNotice, capture_notice, report_notice, rewrite_notice
from fusionlab.partition import MergeCache, PartitionResult, SearchTrace, evaluate
from fusionlab.pipeline import Pass, PipelineCaches, PipelineConfig, Prepared, prepare, prepare_batches
from fusionlab.runtime.reference import Externals
from fusionlab.pipeline.preparing import REROLL_PASSES
from fusionlab.passes.reroll import REROLL_SECONDS
from fusionlab.passes.rewrites import Rewrite, RewritePass
from fusionlab.explore.report import (
    DEFAULT_ALGORITHMS, DEFAULT_COST_MODELS, DEFAULT_TRACE_LIMIT, MIME_TYPE, ReportOptions,
    ReportParts, assemble_report, batch_summaries, find_entry, format_cost, is_first_display_ready,
    batch_section, partition_entry, rewrite_notices, run_partition, trace_data, waterfall_blocks,
    with_saved_batches, work_order,
)
from fusionlab.analysis.wsp import IllegalMerge, PartitionState, WSPGraph
from fusionlab.explore.jupyter.share import ExactShare
from fusionlab.explore.jupyter.timing import (
    DEFAULT_COMPILE_SECONDS, DEFAULT_RUN_SECONDS, SPREAD_WARNING, normalise_timings,
)

__all__ = ["FuseResult", "ManualOutcome", "normalise_timings", "SVG_SECONDS", "SPREAD_WARNING",
           "FIRST_DISPLAY_SECONDS", "DEFAULT_COMPILE_SECONDS", "DEFAULT_RUN_SECONDS", "REROLL_SECONDS",
           "WINDOW_INSTRUCTIONS"]

# The first display comes once the cheap partitions are known, or this many seconds into the
# cell (between two partitions), whichever is first: a big program shows progress early.
FIRST_DISPLAY_SECONDS = 1.5
# Lines of the listing in the text/plain form of the display.
TEXT_LINES = 60
# Seconds the graph's layout for the fallback view may take (cut to the cell's budget).
SVG_SECONDS = 5.0
# REROLL_SECONDS (fusionlab/passes/reroll.py): the seconds rerolling may take, here and when
# "Compile & time" runs the batches (the runner reads the same constant).
# Instructions of a batch the explorer shows (its first ones): the WSP graph, the partitions,
# the listing and the code of a 50,000-instruction prefix a capture stopped at took 5-15 s of
# CPU, most of the cell's budget, and left no partition in it (docs/explorer.md, "Student
# cells"). ``None``: the whole batch.
WINDOW_INSTRUCTIONS = 10_000
# Graphs whose DOT text is longer are not laid out in the kernel (a layout grows faster than
# the text; the views summarise them).
MAX_DOT_CHARS = 150_000


#: seconds the magic gives the other batches' first partitions after the shown batch is done
#: (:meth:`FuseResult.compute_others`: a saved notebook then keeps every batch that fuses)
OTHER_BATCHES_SECONDS = 1.0
#: other batches computed so at most (one of each kind, the largest first)
OTHER_BATCHES = 20

@dataclass(frozen=True)
class ManualOutcome:
    """What a manual merge or split did: legality (with the Lemma 1 reason) and costs."""

    action: str
    legal: bool
    reason: str
    detail: str
    cost_before: float
    cost_after: float
    blocks: tuple[tuple[int, ...], ...]

    @property
    def summary(self) -> str:
        """The verdict and the cost's change, without the action (a reply names its action)."""
        verdict = "legal" if self.legal else f"illegal ({self.reason.lower()}: {self.detail})"
        return f"{verdict}; cost {format_cost(self.cost_before)} -> {format_cost(self.cost_after)}"

    def __str__(self) -> str:
        return f"{self.action}: {self.summary}"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dictionary (blocks with 1-based instruction numbers)."""
        return {"action": self.action, "legal": self.legal, "reason": self.reason, "detail": self.detail,
                "cost_before": self.cost_before, "cost_after": self.cost_after,
                "blocks": [[i + 1 for i in b] for b in self.blocks]}


class FuseResult:
    """The result of a ``%%fuse`` cell (or of a program explored directly).

    Parameters
    ----------
    batches
        The programs to explore (a capture's batches).
    capture
        The :class:`~fusionlab.capture.Capture` they came from, when any (needed to time).
    algorithms, cost_models
        The grid of partitions the report holds.
    selected
        ``(algorithm, cost_model)`` to show first.
    options
        Per-algorithm limits (:class:`~fusionlab.explore.report.ReportOptions`).
    budget_seconds
        The time budget of the work on one batch (``None``: no limit); the magic passes its
        own :class:`~fusionlab.support.budget.Budget` to :meth:`compute` instead.
    trace_limit
        Search-trace nodes kept in the report (the whole trace: :meth:`full_trace`).
    report_id
        The report's ``id`` (the display id); a fresh one by default.
    exact_seconds
        Seconds the exact searches (``optimal``, ``ilp``, ``exhaustive``) of one
        :meth:`compute` may take together, shared fairly between the partitions still to
        compute (each also keeps its own time limit), except the selected partition, which
        keeps its own limit; ``None``: no share of their own, only the budget bounds them.
        Searches it cuts keep their best so far, marked not proven
        (:class:`~fusionlab.explore.jupyter.share.ExactShare`).
    compile_seconds
        The compile budget of :meth:`time` ("Compile & time"): seconds its kernels may take
        to load and compile, checked between kernels; ``None``: no limit.
    reroll
        Rewrite the runs of an unrolled Python loop into 2-D instructions first
        (:mod:`fusionlab.passes.reroll`); the explorer shows the rerolled batches and says what was
        rerolled (notices of kind ``reroll``). ``False`` explores the batches as captured.
    run_seconds
        The time budget of :meth:`time`'s timed runs and check against plain NumPy
        together, checked between runs; ``None``: no limit.
    window
        The instructions of a batch explored: its first ``window`` (after rerolling), the
        rest said in a ``window`` notice (:data:`WINDOW_INSTRUCTIONS` by default; ``None``:
        all). "Compile & time" runs every batch whole.
    reroll_budget
        The budget of the preparing passes, rerolling among them (:data:`REROLL_SECONDS` from
        now by default; the magic passes a child of the cell's budget): the batches, or the
        part of a batch, they do not reach are explored as captured and a notice says so.
    as_captured
        Explore the batches as captured (``%%fuse --as-captured``), rerolled (unless
        ``reroll=False``) but with no pass that drops or moves an instruction (a paper's
        figures are of its programs as written); Compile & time then runs them so too.
        ``None`` (the default): a cell's capture as a run prepares it, bytecode batches given
        without a capture as written. By default the explorer shows,
        partitions and times the batches the pipeline prepares for ``fusionlab run``
        (:func:`fusionlab.pipeline.prepare`): rerolled, dead parts of writes dropped, arrays
        freed early, each rewrite listed in a notice.
    """

    def __init__(
        self,
        batches: Sequence[Program],
        *,
        capture: Any = None,
        name: str = "",
        algorithms: Sequence[str] = DEFAULT_ALGORITHMS,
        cost_models: Sequence[Any] = DEFAULT_COST_MODELS,
        selected: tuple[str, str] | None = None,
        options: Mapping[str, Any] | None = None,
        baseline_namespace: Mapping[str, Any] | None = None,
        budget_seconds: float | None = None,
        trace_limit: int | None = DEFAULT_TRACE_LIMIT,
        report_id: str | None = None,
        exact_seconds: float | None = None,
        compile_seconds: float | None = DEFAULT_COMPILE_SECONDS,
        reroll: bool = True,
        run_seconds: float | None = DEFAULT_RUN_SECONDS,
        reroll_budget: Budget | None = None,
        window: int | None = WINDOW_INSTRUCTIONS,
        as_captured: bool | None = None,
    ) -> None:
        if not batches:
            raise ValueError("nothing to explore: the cell recorded no array instruction "
                             "(fusionlab records NumPy array operations; write the cell with them)")
        self.reroll = reroll
        # a cell as a run prepares it; bytecode given without a capture as written
        self.as_captured = capture is None if as_captured is None else as_captured
        budget = reroll_budget if reroll_budget is not None else Budget(REROLL_SECONDS)
        # the batches as the pipeline prepares them for a run (rerolled, dead parts of writes
        # dropped, arrays freed early: what Compile & time partitions and times), unless the
        # cell asks for them as captured; kept in the caches Compile & time reads
        self.cache = MergeCache()
        self._pipeline = PipelineCaches(merge=self.cache)
        self.prepared = self._prepare(batches, capture, budget)
        #: each batch explored, by its number in the run's batches (the magic leaves out empty ones)
        self.run_batch = _run_batches(batches, self.prepared)
        whole = [self.prepared.programs[k] for k in self.run_batch]
        if window is not None and window < 1:
            raise ValueError(f"the window is at least one instruction (None: all), not {window!r}")
        self.window = window
        #: each batch's length before the window cut it (the batches explored are its first part)
        self.batch_lengths = [len(p) for p in whole]
        self.batches = [_windowed(p, window) for p in whole]
        self.capture = capture
        self.name = name
        self.algorithms = list(algorithms)
        self.models = [_cost_model(m, capture) for m in cost_models]
        self.options = ReportOptions() if options is None else dict(options)
        self.batch = self._default_batch()
        alg = "greedy" if "greedy" in self.algorithms else self.algorithms[0]
        self.selected = selected or (alg, self.models[0].name)
        self._check_selected(*self.selected)
        self.budget_seconds = budget_seconds
        self.exact_seconds = exact_seconds
        self._share = ExactShare(exact_seconds)  # the exact searches' share, and what it cut
        self.trace_limit = trace_limit
        self.report_id = report_id or f"fusionlab-{uuid.uuid4().hex}"
        self.manual: PartitionResult | None = None
        self.timings: dict[str, Any] | None = None
        #: the last :meth:`profile` (a :class:`~fusionlab.pipeline.profiling.Profile`), and its report section
        self.profiled: Any = None
        self._profile: dict[str, Any] | None = None
        self._baseline_namespace = baseline_namespace
        self.compile_seconds = compile_seconds
        self._kernel_cache: Any = None  # the kernels "Compile & time" loaded, kept between clicks
        self.run_seconds = run_seconds
        self._report: dict[str, Any] | None = None
        self._parts: dict[int, ReportParts] = {}
        # per batch: phase, interrupted, budget and time spent (the report's status)
        self._status: dict[int, dict[str, Any]] = {}
        self._svgs: dict[str, tuple[str | None, str]] = {}  # DOT text -> (SVG, note): layouts are slow
        # blocks whose code generation did not fit the budget (not tried again for the same display)
        self._code_skipped: set[tuple[int, tuple[tuple[int, ...], ...]]] = set()
        self._dots: dict[tuple[Any, ...], str] = {}  # the selected partition's DOT text, by what it draws
        self._summaries: list[dict[str, Any]] | None = None  # the batches section (signatures take seconds)
        #: the measured waterfalls (:meth:`time_waterfall`), by batch, cost model and their two ends
        self._measured: dict[tuple[int, str, tuple[str, ...], tuple[str, ...]], dict[str, Any]] = {}
        #: other batches' sections of a saved report, by batch and selection (made once each)
        self._sections: dict[tuple[int, tuple[str, str]], dict[str, Any]] = {}

    @classmethod
    def from_program(cls, program: Program, **kwargs: Any) -> "FuseResult":
        """Explore one bytecode program as written (rerolled unless ``reroll=False``): the
        bytecode is the program a reader wrote, the paper's Fig. 3 with its dead writes among
        them; ``as_captured=False`` explores it as a run prepares it."""
        return cls([program], **kwargs)

    def _default_batch(self) -> int:
        # the largest batch is the interesting one: the others are often set-up or a print
        return max(range(len(self.batches)), key=lambda k: (len(self.batches[k]), -k))

    def _check_selected(self, algorithm: str, cost_model: str) -> None:
        names = [m.name for m in self.models]
        if algorithm not in self.algorithms + ["manual"]:
            raise ValueError(f"algorithm {algorithm!r} is not explored; choose one of {', '.join(self.algorithms)}")
        if cost_model not in names:
            raise ValueError(f"cost model {cost_model!r} is not explored; choose one of {', '.join(names)}")

    # -- data ------------------------------------------------------------------------
    @property
    def program(self) -> Program:
        """The batch being explored."""
        return self.batches[self.batch]

    @property
    def parts(self) -> ReportParts:
        """The report's pieces for the current batch (program, graph, finished partitions)."""
        if self.batch in self._parts:
            return self._parts[self.batch]  # perhaps the listing alone, while the graph is built
        return self._parts_within(Budget(self.budget_seconds))

    def _parts_within(self, budget: Budget) -> ReportParts:
        if self.batch not in self._parts or self._parts[self.batch].graph_pending:
            # the listing shown before the graph is kept: its program section is not made twice
            parts = ReportParts.of(self.program, budget=budget, listing=self._parts.get(self.batch))
            if parts.graph is not None:   # after the graph, as the display waits for it; none without one
                parts.notices += rewrite_notices(self.prepared, self.run_batch[self.batch], shown=True)
            self._parts[self.batch] = parts
        return self._parts[self.batch]

    def _timed_target(self) -> tuple[Any, int]:
        """What Compile & time runs (the cell's capture, else the batch shown) and the batch
        shown's index in it."""
        return (self.capture, self.run_batch[self.batch]) if self.capture is not None else (self.program, 0)

    @property
    def config(self) -> PipelineConfig:
        """The preparing passes of this exploration, which Compile & time runs too: every
        pass, as ``fusionlab run`` (rerolling off with ``reroll=False``); with ``as_captured``
        only rerolling (when on), no pass that drops or moves an instruction."""
        config = PipelineConfig() if self.reroll else PipelineConfig().without(*REROLL_PASSES)
        if self.as_captured:
            config = config.without(Pass.DEAD_WRITES, Pass.FREE_EARLY, Pass.DEAD_WRITES_AFTER_FREE)
        return config

    def _prepare(self, batches: Sequence[Program], capture: Any, budget: Budget) -> Prepared:
        """The pipeline's preparing passes on the cell (or the batches given without one),
        within ``budget``; kept in the caches Compile & time reads unless the budget cut them
        (Compile & time then prepares within its own budget)."""
        if capture is not None:
            prepared = prepare(capture, self.config, budget)
            if not prepared.cut:
                self._pipeline.prepared.put(capture, prepared, self.config.passes)
            return prepared
        programs, constants, rerolled, rewrites, cut = prepare_batches(list(batches), self.config, budget=budget)
        return Prepared(tuple(batches), tuple(programs), dict(constants), dict(constants), Externals(),
                        tuple(rerolled), tuple(rewrites), tuple(cut))

    @property
    def graph(self) -> WSPGraph:
        """The WSP graph of the current batch."""
        graph = self.parts.graph
        if graph is None and self.parts.graph_pending:
            graph = self._parts_within(Budget(self.budget_seconds)).graph
        if graph is None:
            raise ValueError(f"the WSP graph of batch {self.batch + 1} was not built within the time budget: "
                             "rerun the cell with a larger --budget")
        return graph

    @property
    def model(self) -> Any:
        """The selected cost model object."""
        return self._model(self.selected[1])

    def _model(self, name: str) -> Any:
        return next(m for m in self.models if m.name == name)

    @property
    def status(self) -> dict[str, Any]:
        """The work's status on the current batch (the report's ``status`` without ``pending``)."""
        return self._status.setdefault(self.batch, {
            "phase": "waiting", "interrupted": False, "budget_seconds": self.budget_seconds,
            "elapsed_seconds": 0.0})

    @property
    def exact_budget(self) -> Budget | None:
        """The exact searches' share of the last :meth:`compute`'s budget (``None`` before
        one ran an exact search, or with no ``exact_seconds``): each exact search's budget
        ends by its deadline."""
        return self._share.budget

    @property
    def phase(self) -> str:
        """What the work is doing now (the progress line)."""
        return self.status["phase"]

    def pending(self) -> list[tuple[str, str]]:
        """The partitions of the current batch not computed yet, in the order they will be."""
        done = self.parts.entries
        return [k for k in work_order(self.algorithms, [m.name for m in self.models], self._work_selected())
                if k not in done]

    def _work_selected(self) -> tuple[str, str]:
        alg = self.selected[0] if self.selected[0] in self.algorithms else \
            ("greedy" if "greedy" in self.algorithms else self.algorithms[0])
        return alg, self.selected[1]

    def first_display_ready(self) -> bool:
        """Whether the cheap partitions under the selected model are known."""
        return is_first_display_ready(list(self.parts.entries), self.algorithms, self.selected[1])

    def compute(self, budget: Budget | None = None, *, first_only: bool = False,
                on_update: Callable[[], None] | None = None, first_by: float | None = None) -> bool:
        """Compute the pending partitions of the current batch within ``budget``.

        Cheap algorithms under the selected model come first (``first_only`` stops once
        they are known, or at ``first_by`` on ``time.perf_counter``, whichever comes first:
        the first display), then the rest (:func:`~fusionlab.explore.report.work_order`).
        Each algorithm gets a child budget (its own time limit, cut to what is left);
        searches cut short keep their best so far, marked. ``on_update`` is called after
        each partition (the caller throttles). Kernel -> Interrupt (``KeyboardInterrupt``)
        stops the work: the partition being computed and those left are marked
        ``interrupted`` and this returns normally. Returns whether nothing is pending.
        """
        budget = budget if budget is not None and budget is not UNLIMITED else Budget(self.budget_seconds)
        st = self.status
        # the cell's budget (the searches may be given a little less, for the layout)
        own = budget.seconds if budget.seconds is not None and math.isfinite(budget.seconds) else None
        st["budget_seconds"] = self.budget_seconds if self.budget_seconds is not None else own
        # time counted as the budget counts it (the magic's started with the capture)
        spent_before, started = 0.0, budget.started
        try:
            st["phase"] = "WSP graph"
            late = first_by is not None and time.perf_counter() >= first_by
            if first_only and late and self.batch not in self._parts:
                # a slow capture: show the listing now, the graph comes next
                self._parts[self.batch] = ReportParts.before_graph(self.program)
                self._report = None
                return False
            parts = self._parts_within(budget)
            if parts.graph is None:  # no graph in time: every partition is cut by the budget
                for alg, name in self.pending():
                    parts.add(alg, self._model(name), None, "budget",
                              note="the WSP graph was not built within the time budget")
            if not first_only and self._selected_result() is not None:
                # the selected partition's code comes before the long searches
                st["phase"] = "code generation"
                self._code(budget)
            for alg, name in self.pending():
                if first_only and (self.first_display_ready()
                                   or (first_by is not None and time.perf_counter() >= first_by)):
                    break
                st["phase"] = f"{alg} under {name}"
                if on_update is not None:
                    on_update()
                if not self._one(parts, alg, name, budget, until=first_by if first_only else None):
                    break  # the first display's time came in the middle: it is computed afterwards
                st["elapsed_seconds"] = round(spent_before + time.perf_counter() - started, 3)
                self._report = None
                if on_update is not None:
                    on_update()
            if first_only and self.pending():
                # what comes next: the display shows it meanwhile
                chosen = self._selected_result()
                has_code = chosen is not None and self._code_key(chosen) not in self._code_skipped
                st["phase"] = "code generation" if has_code else "{} under {}".format(*self.pending()[0])
            else:
                st["phase"] = "code generation"
                self._code(budget)
        except KeyboardInterrupt:
            self.mark_interrupted()
        st["elapsed_seconds"] = round(spent_before + time.perf_counter() - started, 3)
        if not self.pending() and not st["interrupted"]:  # interrupted: the phase it stopped in stays
            st["phase"] = "done"
        self._report = None
        return not self.pending()

    def mark_interrupted(self) -> None:
        """Kernel -> Interrupt stopped the work: what is pending is marked ``interrupted``
        (the phase it stopped in stays in the status)."""
        self.status["interrupted"] = True
        if self.batch not in self._parts:  # interrupted while building the graph: the listing alone
            self._parts[self.batch] = ReportParts.before_graph(self.program)
        parts = self._parts[self.batch]
        for alg, name in self.pending():
            parts.add(alg, self._model(name), None, "interrupted", note="Kernel -> Interrupt stopped the work")
        self._report = None

    def _one(self, parts: ReportParts, alg: str, name: str, budget: Budget, until: float | None = None) -> bool:
        """Compute one partition. With ``until`` (a ``time.perf_counter`` time: the first
        display's) the work stops then, and a partition it cut is not kept but left pending
        (``False``): a long greedy started just before the first display does not hold it
        back, and is computed in full afterwards."""
        own = self.options.get(alg, {}).get("time_limit") if isinstance(self.options.get(alg), Mapping) else None
        model = self._model(name)
        limit = self._share.limit(budget, (alg, name), own, chosen=self._work_selected(), pending=self.pending())
        if until is not None:
            # a child of the limit, not of the cell's budget: started later, a child of the
            # cell's with the limit's time left would end past the share's deadline by the
            # time between the two readings of the clock (0.26 s on a loaded CI machine)
            limit = limit.child(max(until - time.perf_counter(), 0.0))
        try:
            # a search gets greedy's partition under the model when shown: cut, it returns at least that
            result, status = run_partition(self.program, alg, model, cache=self.cache, options=self.options,
                                           budget=limit, graph=parts.graph, known=parts.results.get(("greedy", name)))
        except (NonMonotonicCostModel, UnsupportedCostModel) as exc:
            parts.add(alg, model, None, "error", note=str(exc))
            return True
        if status == "budget" and until is not None and time.perf_counter() >= until and not budget.expired():
            return False
        note = ""
        if status == "budget" and result is None:
            note = "the time budget ran out before this partition was computed"
        # cut by the time (a node limit is its own reason, which the entry's notes give)
        self._share.record(self.batch, (alg, name), timed_out=status == "budget" and (
            result is None or bool(result.budget_cut)), chosen=self._work_selected(), given=limit, own=own)
        parts.add(alg, model, result, status, budget=budget, note=note)
        return True

    def _code_key(self, result: PartitionResult) -> tuple[int, tuple[tuple[int, ...], ...]]:
        return self.batch, tuple(tuple(b) for b in result.blocks)

    def _code(self, budget: Budget) -> None:
        result = self._selected_result()
        if result is None or self._code_key(result)[1] in self.parts.code or self._code_key(result) in \
                self._code_skipped:
            return
        if not self.parts.code_fits(budget):
            self._code_skipped.add(self._code_key(result))  # the report says the code was not generated
            return
        try:
            self.parts.code_for(result.blocks, budget)
        except BudgetExceeded:
            self._code_skipped.add(self._code_key(result))

    def _selected_result(self) -> PartitionResult | None:
        if self.selected[0] == "manual" and self.manual is not None:
            return self.manual
        return self.parts.results.get(self.selected)

    @property
    def partitions(self) -> dict[tuple[str, str], PartitionResult]:
        """Every algorithm x cost model partition of the current batch (computed within the
        budget when not yet; those the budget stopped before any result are missing)."""
        if self.pending():
            self.compute()
        return {k: r for k, r in self.parts.results.items()}

    @property
    def costs(self) -> dict[tuple[str, str], float]:
        """The cost of each partition in :attr:`partitions`."""
        return {k: r.cost for k, r in self.partitions.items()}

    @property
    def current(self) -> PartitionResult:
        """The selected partition (the manual one in manual mode)."""
        got = self._selected_result()
        if got is None:
            self.compute()
            got = self._selected_result()
        if got is None:
            entry = self.parts.entries.get(self.selected, {})
            raise ValueError(f"no partition {self.selected[0]}/{self.selected[1]}: "
                             f"{'; '.join(entry.get('notes', [])) or 'not computed'}; select another")
        return got

    @property
    def trace(self) -> SearchTrace | None:
        """The branch-and-bound trace of ``optimal`` under the selected cost model."""
        r = self.parts.results.get(("optimal", self.selected[1]))
        return None if r is None else r.trace

    def full_trace(self) -> dict[str, Any] | None:
        """The whole search trace (the report keeps ``trace_limit`` nodes of it)."""
        return trace_data(self.parts.results.get(("optimal", self.selected[1])), None)

    def _code_section(self, generate: bool = True) -> list[dict[str, Any]]:
        result = self._selected_result()
        if result is None:
            return []
        key = tuple(tuple(b) for b in result.blocks)
        if key not in self.parts.code and generate:
            if self.status["phase"] not in ("done", "pending") and not self.status["interrupted"]:
                return []  # the work is under way: its code generation phase fills this in
            self._code(Budget(SVG_SECONDS))
        return self.parts.code.get(key, [])

    def report(self) -> dict[str, Any]:
        """The explorer's JSON document for the current state (see :mod:`fusionlab.explore.report`).

        A batch nothing was computed for yet is computed first, within ``budget_seconds``. The
        other batches viewed that fuse something are kept in it (``saved_batches``, within the
        saved report's size budget), so that a saved notebook shows them with no kernel."""
        if self._report is None:
            report = self._assemble()
            others = [self._section_of(k) for k in sorted(self._parts) if k != self.batch]
            self._report = with_saved_batches(report, [o for o in others if o is not None])
        return self._report

    def compute_others(self, budget: Budget, most: int = OTHER_BATCHES) -> int:
        """The other batches' first partitions (the cheap algorithms under the selected cost
        model, as a first display computes them), so that a saved notebook keeps every batch
        that fuses something (``saved_batches``): the largest batches first, one of each kind
        (a batch alike an earlier one, ``same_as``, is that one's), at most ``most``, within
        ``budget``; the batch shown stays shown. Returns how many were computed. The magic
        calls this once the shown batch is done, with :data:`OTHER_BATCHES_SECONDS`."""
        shown, manual, done = self.batch, self.manual, 0
        summaries = self._batch_summaries()
        waiting = [k for k in range(len(self.batches))
                   if k not in self._parts and summaries[k]["same_as"] is None]
        try:
            for k in sorted(waiting, key=lambda k: (-len(self.batches[k]), k))[:most]:
                if budget.expired():
                    break
                self.batch, self.manual = k, None
                self.compute(budget, first_only=True)
                # not under way: the rest of its partitions wait for the menu to ask for them
                self.status["phase"] = "pending" if self.pending() else "done"
                done += 1
        except KeyboardInterrupt:   # the shown batch is complete: the others are extras
            pass
        finally:
            self.batch, self.manual = shown, manual
            self._report = None
        return done

    def _section_of(self, batch: int) -> dict[str, Any] | None:
        """Batch ``batch``'s section of a saved report (:func:`~fusionlab.explore.report.batch_section`),
        under the current selection; ``None`` while its work is under way. It is made as its own
        report is (the batch is this one for the time it takes), without new code generation."""
        if self._status.get(batch, {}).get("phase", "waiting") not in ("done", "pending"):
            return None
        key = (batch, self.selected)
        if key not in self._sections:
            kept = self.batch, self.manual, self.selected, self._report, self.timings, self._profile
            try:
                self.batch, self.manual, self._report, self.timings, self._profile = batch, None, None, None, None
                if self.selected[0] == "manual":
                    self.selected = ("greedy" if "greedy" in self.algorithms else self.algorithms[0], self.selected[1])
                self._sections[key] = batch_section(self._assemble(generate=False))
            finally:
                self.batch, self.manual, self.selected, self._report, self.timings, self._profile = kept
        return self._sections[key]

    def _assemble(self, generate: bool = True) -> dict[str, Any]:
        """The report of the current batch alone (``generate=False``: no new code generation)."""
        if self.status["phase"] == "waiting":
            self.compute()
        if self._report is None:
            notices = []
            if self.capture is not None:
                notices = [capture_notice(n) for n in self.capture.notices]
            notices += [rewrite_notice(ReportNotice.REROLL, r) for r in self.rerolled_records()]
            window = self.window_notice()
            if window is not None:
                notices.append(window)
            extra = []
            if self.manual is not None:
                extra = [partition_entry(self.manual, self.graph, model=self.model, accesses=self.parts.accesses)]
            st = dict(self.status)
            code = self._code_section(generate)
            chosen = self._selected_result()
            if not code and chosen is not None and self._code_key(chosen) in self._code_skipped:
                notices.append(report_notice(ReportNotice.CODE, (
                    f"the generated code of this {len(self.program)}-instruction batch is not shown: generating it "
                    "would not end within the time budget (rerun with a larger --budget)")))
            share_notice = self._share.notice(self.batch)
            if share_notice is not None:
                notices.append(share_notice)
            self._report = assemble_report(
                self.parts, algorithms=self.algorithms, cost_models=self.models, selected=self.selected,
                report_id=self.report_id, name=self.name, source=getattr(self.capture, "source", "") or "",
                batches=self._batch_summaries(), batch=self.batch, notices=notices, extra=extra,
                status=st, trace=trace_data(self.parts.results.get(("optimal", self.selected[1])), self.trace_limit),
                code=code, timings=self.timings, profile=self._profile,
            )
            measured = [m for k, m in self._measured.items() if k[0] == self.batch]
            if measured:   # additive: present once a waterfall was timed
                self._report["measured_waterfalls"] = measured
            rs = self._report["status"]
            rs["complete"] = rs["complete"] and not rs["interrupted"]
            if rs["pending"] and rs["phase"] in ("done", "waiting"):
                rs["phase"] = "pending"
        return self._report

    def window_notice(self) -> dict[str, Any] | None:
        """The notice saying the batch shown is the first part of a longer one (``None``
        when it is whole)."""
        whole, shown = self.batch_lengths[self.batch], len(self.program)
        if whole == shown:
            return None
        return report_notice(ReportNotice.WINDOW, (
            f"batch {self.batch + 1} has {whole:,} instructions: the explorer shows its first {shown:,} (the graph, "
            f"partitions and code of all of them would not fit the time budget; `%%fuse --window N` shows more, "
            "`--window inf` all). Compile & time runs the whole cell."))

    def rerolled(self) -> list[str]:
        """What rerolling did to the batch shown, one line each (empty when it is off): the
        pass's records (:meth:`~fusionlab.passes.reroll.Reroll.rewrites`), without the batch's
        number (the batch is the one shown)."""
        return [r.describe(numbered=False) for r in self.rerolled_records()]

    def rerolled_records(self) -> list[Rewrite]:
        """The rerolling pass's records of the batch shown (:meth:`rerolled` is their lines)."""
        k = self.run_batch[self.batch]
        mine = [r for r in self.prepared.rerolled if r.batch in (None, k)]
        return mine + [r for r in self.prepared.cut if r.by is RewritePass.REROLL and r.batch == k]

    def _batch_summaries(self) -> list[dict[str, Any]]:
        # the batches never change; their signatures took 0.85 s per report at 80,000 instructions
        if self._summaries is None:
            self._summaries = batch_summaries(self.batches)
        return self._summaries

    def to_json(self, indent: int | None = None) -> str:
        """The report as JSON text."""
        return json.dumps(self.report(), indent=indent)

    def to_dot(self, level: str = "auto") -> str:
        """DOT source of the selected partition's graph (block level when too dense)."""
        report = self.report()
        sel = report["selected"]
        return get_dot(report, find_entry(report, sel["algorithm"], sel["cost_model"]), level=level)

    def text(self) -> str:
        """A plain-text summary: the listing with blocks, then the cost of every partition."""
        from fusionlab.explore.viz.listing import status_line

        report = self.report()
        lines = [f"fusionlab: batch {self.batch + 1} of {len(self.batches)}, {len(self.program)} instructions",
                 status_line(report)] + self.rerolled()
        if self.window_notice() is not None:
            lines.append(self.window_notice()["message"])
        got = self._selected_result()
        if len(self.program) == 0:
            lines.append("warning: the program is empty (0 instructions): nothing to partition")
        elif got is not None:
            listing = got.format_text().splitlines()
            if len(listing) > TEXT_LINES:  # text/plain is saved in the notebook too: keep it short
                listing = listing[:TEXT_LINES - 1] + [f"... {len(listing) - TEXT_LINES + 1} more lines "
                                                      "(all of them: print(_fuse.current.format_text()))",
                                                      listing[-1]]
            lines += listing
        entries = {(e["algorithm"], e["cost_model"]): e for e in report["partitions"]}
        lines += ["", f"{'algorithm':<12} " + " ".join(f"{m.name:>16}" for m in self.models)]
        for a in self.algorithms:
            cells = []
            for m in self.models:
                e = entries[(a, m.name)]
                mark = "*" if e["proven_optimal"] else ("+" if e["status"] != "done" else "")
                cells.append(f"{(format_cost(e['cost']) + mark) if e['cost'] is not None else e['status']:>16}")
            lines.append(f"{a:<12} " + " ".join(cells))
        lines.append("* proven optimal; + cut by the budget or interrupted (best so far, not proven)")
        return "\n".join(lines)

    # -- state changes -----------------------------------------------------------------
    def _changed(self) -> "FuseResult":
        self._report = None
        return self

    def select(self, algorithm: str | None = None, cost_model: str | None = None) -> "FuseResult":
        """Show another partition (``algorithm="manual"`` shows the hand-made one)."""
        algorithm = algorithm or self.selected[0]
        names = [m.name for m in self.models]
        if cost_model and cost_model not in names:
            cost_model = get_cost_model(cost_model).name
        cost_model = cost_model or self.selected[1]
        self._check_selected(algorithm, cost_model)
        if algorithm == "manual" and self.manual is None:
            self.manual = self._manual_from(self.current.blocks)
        self.selected = (algorithm, cost_model)
        if self.manual is not None and self.manual.cost_model != cost_model:
            self.manual = self._manual_from(self.manual.blocks)
        return self._changed()

    def set_batch(self, batch: int) -> "FuseResult":
        """Explore batch ``batch`` (0-based); repeated batches reuse cached partitions."""
        if not 0 <= batch < len(self.batches):
            raise IndexError(f"batch {batch} does not exist: batches are numbered 0 to {len(self.batches) - 1}")
        # the batch left is kept as it is now (its saved section is made again from it)
        self._sections = {k: v for k, v in self._sections.items() if k[0] != self.batch}
        self.batch = batch
        self.manual = None
        if self.selected[0] == "manual":
            self.selected = ("greedy" if "greedy" in self.algorithms else self.algorithms[0], self.selected[1])
        return self._changed()

    def _manual_from(self, blocks: Sequence[Sequence[int]]) -> PartitionResult:
        return evaluate(self.graph, blocks, self.model)

    def _start_manual(self) -> PartitionResult:
        if self.manual is None:
            self.manual = self._manual_from(self.current.blocks)
        return self.manual

    def merge(self, a: int, b: int) -> ManualOutcome:
        """Manual mode: merge blocks ``a`` and ``b`` (1-based, as the views number them).

        An illegal merge is refused; the outcome carries the Lemma 1 reason.
        """
        start = self._start_manual()
        blocks = list(start.blocks)
        for k in (a, b):
            if not 1 <= k <= len(blocks):
                raise IndexError(f"block {k} does not exist: blocks are numbered 1 to {len(blocks)}")
        state = PartitionState(self.graph, blocks)
        ia, ib = state.block_of[blocks[a - 1][0]], state.block_of[blocks[b - 1][0]]
        problem = state.merge_problem(ia, ib)
        if problem is not None:
            return ManualOutcome("merge", False, problem[0].name, problem[1], start.cost, start.cost, start.blocks)
        merged = tuple(sorted(blocks[a - 1] + blocks[b - 1]))
        new = [blk for k, blk in enumerate(blocks) if k not in (a - 1, b - 1)] + [merged]
        self.manual = self._manual_from(new)
        self.selected = ("manual", self.selected[1])
        self._changed()
        return ManualOutcome("merge", True, "", "", start.cost, self.manual.cost, self.manual.blocks)

    def split(self, block: int, instructions: Sequence[int] | None = None) -> ManualOutcome:
        """Manual mode: move ``instructions`` (1-based numbers) of ``block`` into a block of
        their own, or split the block into single instructions. A split that makes a cycle
        between blocks is refused with the reason."""
        start = self._start_manual()
        blocks = list(start.blocks)
        if not 1 <= block <= len(blocks):
            raise IndexError(f"block {block} does not exist: blocks are numbered 1 to {len(blocks)}")
        members = blocks[block - 1]
        if instructions is None:
            pieces = [(i,) for i in members]
        else:
            moved = tuple(sorted(i - 1 for i in instructions))
            if not moved or not set(moved) < set(members):
                raise ValueError(f"instructions {list(instructions)} are not a proper part of block {block}")
            pieces = [moved, tuple(i for i in members if i not in moved)]
        new = [blk for k, blk in enumerate(blocks) if k != block - 1] + pieces
        trial = self._manual_from(new)
        if not trial.legal:
            return ManualOutcome("split", False, IllegalMerge.CYCLE.name, "; ".join(trial.notes),
                                 start.cost, start.cost, start.blocks)
        self.manual = trial
        self.selected = ("manual", self.selected[1])
        self._changed()
        return ManualOutcome("split", True, "", "", start.cost, trial.cost, trial.blocks)

    def reset_manual(self) -> "FuseResult":
        """Forget the manual partition."""
        self.manual = None
        if self.selected[0] == "manual":
            self.selected = ("greedy" if "greedy" in self.algorithms else self.algorithms[0], self.selected[1])
        return self._changed()

    # -- timing ------------------------------------------------------------------------
    def time(self, repeat: int = 3, cost_models: Sequence[str] | None = None,
             progress: Callable[[str, int, int], None] | None = None,
             compile_seconds: float | None = None, run_seconds: float | None = None) -> list[Any]:
        """Compile and time the selected algorithm's partition under every cost model (or
        ``cost_models``) against NumPy eager, all batches of the cell, within a compile
        budget of ``compile_seconds`` (default: the result's ``compile_seconds``); returns
        the records and stores them in the report's ``timings``
        (:func:`~fusionlab.explore.jupyter.timing.time_program`); the timed runs and the check
        within ``run_seconds`` (default: the result's ``run_seconds``). Kernel -> Interrupt
        stops it between kernels or runs and keeps the rows timed. The kernels and their
        plans are kept: a second click goes on where the budget stopped the first."""
        from fusionlab.explore.jupyter.timing import plain_baseline, time_program

        target = self._timed_target()[0]
        algorithm = self.selected[0] if self.selected[0] != "manual" else "greedy"
        models = [_cost_model(m, self.capture) for m in cost_models] if cost_models else list(self.models)
        # a capture stopped at its budget is timed against its recorded part (NumPy eager
        # replaying it), not against the whole cell
        stopped = getattr(self.capture, "stopped", None) is not None
        baseline = None if stopped else plain_baseline(getattr(self.capture, "source", ""), self._baseline_namespace)
        seconds = self.compile_seconds if compile_seconds is None else compile_seconds
        runs = self.run_seconds if run_seconds is None else run_seconds
        self._share_shown(algorithm)
        records, self.timings = time_program(target, algorithm, models, baseline, repeat, progress, seconds,
                                             kernel_cache=self._kernels(), reroll=self.reroll, run_seconds=runs,
                                             caches=self._pipeline, options=self.options, config=self.config)
        self._changed()
        return records

    def time_waterfall(self, a: str, b: str, cost_model: str | None = None, repeat: int = 3,
                       compile_seconds: float | None = None, run_seconds: float | None = None) -> dict[str, Any]:
        """Time the fusion waterfall between ``a``'s and ``b``'s partitions (algorithms) of the
        batch shown under ``cost_model`` (default: the selected one): the partitions on the way
        compiled and timed side by side against NumPy eager, the whole cell each time
        (:mod:`fusionlab.explore.measured_waterfall`), within the compile and run budgets of
        Compile & time. The steps are the report's (the ``steps`` section's waterfall, in its
        direction). Stores the section in the report's ``measured_waterfalls`` and returns it.

        Raises ``ValueError`` when the report has no waterfall between the two (not computed,
        the same partition, or a batch too long for steps) or the batch shown is a window of
        a longer one (its partition would not be the run's)."""
        from fusionlab.explore.jupyter.timing import plain_baseline, time_program
        from fusionlab.explore.measured_waterfall import measured_waterfall
        from fusionlab.explore.waterfall import waterfall

        if repeat < 1:
            raise ValueError("repeat must be at least 1")
        name = cost_model or self.selected[1]
        report = self.report()
        falls = [w for w in (report.get("steps") or {}).get("waterfalls", []) if w["cost_model"] == name]
        fall = next((w for w in falls if a in w["a"] and b in w["b"]), None) or \
            next((w for w in falls if a in w["b"] and b in w["a"]), None)
        if fall is None:
            why = (report.get("steps") or {}).get("not_made") or "the two partitions are the same, or not computed"
            raise ValueError(f"no waterfall between {a} and {b} under {name} in the report ({why})")
        if self.batch_lengths[self.batch] != len(self.program):
            raise ValueError(f"batch {self.batch + 1} is shown as its first {len(self.program):,} instructions of "
                             f"{self.batch_lengths[self.batch]:,}: rerun with --window inf to time its waterfall")
        model = self._model(name)
        ends = [waterfall_blocks(find_entry(report, fall[side][0], name)) for side in ("a", "b")]
        steps = waterfall(self.parts.graph, ends[0], ends[1], model)
        target, shown = self._timed_target()
        algorithm = self.selected[0] if self.selected[0] != "manual" else "greedy"
        stopped = getattr(self.capture, "stopped", None) is not None
        baseline = None if stopped else plain_baseline(getattr(self.capture, "source", ""), self._baseline_namespace)

        def time_variants(variants: list[Mapping[int, Sequence[Sequence[int]]]]) -> list[Any]:
            records, _ = time_program(
                target, algorithm, [model], baseline, repeat, None,
                self.compile_seconds if compile_seconds is None else compile_seconds, kernel_cache=self._kernels(),
                reroll=self.reroll, run_seconds=self.run_seconds if run_seconds is None else run_seconds,
                caches=self._pipeline, options=self.options, config=self.config, variants=variants)
            return records

        section = measured_waterfall(time_variants, shown, ends[0], steps)
        others = len(self.prepared.programs) - 1 if self.capture is not None else 0
        section.update(cost_model=name, a=list(fall["a"]), b=list(fall["b"]), batch=self.batch, repeat=repeat,
                       other_batches=(f"the cell's {others} other batch{'es' if others > 1 else ''} as {algorithm} "
                                      f"under {name} partitions {'them' if others > 1 else 'it'}" if others else ""))
        self._measured[(self.batch, name, tuple(fall["a"]), tuple(fall["b"]))] = section
        self._changed()
        return section

    def _share_shown(self, algorithm: str) -> None:
        """Put the explorer's WSP graphs and the partitions it showed under ``algorithm`` in
        the pipeline's caches: what Compile & time and a profile run is what was shown, never
        searched (or built) again."""
        for k, parts in self._parts.items():  # the explorer's WSP graphs: not built again
            if parts.graph is not None:
                if self._pipeline.graphs.get(self.batches[k]) is None:
                    self._pipeline.graphs.put(self.batches[k], parts.graph)
            for (alg, name), result in parts.results.items():  # the partitions shown: timed, never searched again
                if result is not None and alg == algorithm:
                    self._pipeline.shown.put(self.batches[k], result, (alg, name))

    def profile(self, repeat: int = 5, numpy_seconds: float | None = None) -> Any:
        """Profile the selected partition of the cell (all its batches; greedy's in manual
        mode, as :meth:`time`): each block timed ``repeat`` times after a warm-up, beside the
        ``time`` model's prediction for it, and this machine's roofs for a roofline
        (:func:`fusionlab.pipeline.profiling.profile`). It plans what Compile & time runs
        (the same configuration, caches and kernel cache: the partitions shown, not searched
        again), its timed rounds within the run budget (``run_seconds``: fewer rounds when
        they would not fit, at least one). ``numpy_seconds``: NumPy eager's time for the cell,
        to say why the fused run is slower; by default the NumPy row of the last Compile &
        time, else the cell run plainly ``repeat`` times after a warm-up. Stores the profile in the report's ``profile`` (the
        rows of the timings with these kernels get its ``why_slower``) and returns the
        :class:`~fusionlab.pipeline.profiling.Profile`."""
        from dataclasses import replace

        from fusionlab.pipeline.profiling import profile

        if repeat < 1:
            raise ValueError("repeat must be at least 1")
        target = self._timed_target()[0]
        algorithm = self.selected[0] if self.selected[0] != "manual" else "greedy"
        model = self.model
        self._share_shown(algorithm)
        config = replace(self.config, algorithm=algorithm, cost_model=model,
                         options=tuple(sorted(dict(self.options.get(algorithm, {}) or {}).items())))
        if numpy_seconds is None:
            numpy_seconds = self._numpy_seconds(repeat)
        # the views number the batches they explore: the run's batch k is explored batch explored[k]
        explored = {run: k + 1 for k, run in enumerate(self.run_batch)}
        count = len(self.prepared.programs) if self.capture is not None else 1
        numbers = [explored.get(k, k + 1) for k in range(count)]
        got = profile(target, config, caches=self._pipeline, cache=self._kernels(), repeat=repeat,
                      numpy_seconds=numpy_seconds, batch_numbers=numbers, seconds=self.run_seconds)
        self.profiled = got
        self._profile = got.to_dict()
        self._mark_slower(got)
        self._changed()
        return got

    def _numpy_seconds(self, repeat: int) -> float | None:
        """NumPy eager's seconds for the cell: the last Compile & time's NumPy row, else the
        cell run plainly (on a copy of the namespace it started from) ``repeat`` times after a
        warm-up, as many as fit in half the run budget (``run_seconds``; the warm-up's time when
        none does); ``None`` without a source (bytecode explored) or a capture stopped at its
        budget (NumPy would do more than the recording)."""
        import statistics

        for r in (self.timings or {}).get("records", []):
            if r.get("cost_model") == "numpy" and r.get("median_seconds"):
                return float(r["median_seconds"])
        from fusionlab.explore.jupyter.timing import plain_baseline

        if getattr(self.capture, "stopped", None) is not None:
            return None
        baseline = plain_baseline(getattr(self.capture, "source", "") or "", self._baseline_namespace)
        if baseline is None:
            return None
        t = time.perf_counter()
        baseline()
        warm = time.perf_counter() - t
        budget = math.inf if self.run_seconds is None else self.run_seconds / 2
        times: list[float] = []
        while len(times) < repeat and warm + sum(times) + (times[-1] if times else warm) <= budget:
            t = time.perf_counter()
            baseline()
            times.append(time.perf_counter() - t)
        return statistics.median(times) if times else warm

    def _mark_slower(self, got: Any) -> None:
        """The timing rows of the profiled partition (and the rows with its kernels) say
        where their time went, when slower than NumPy (``why_slower``)."""
        if not self.timings:
            return
        label = f"{got.algorithm} / {got.cost_model}"
        rows = self.timings.get("records", [])
        mine = [r for r in rows if f"{r.get('algorithm')} / {r.get('cost_model')}" == label]
        owner = mine[0].get("same_kernels_as") or label if mine else label
        for r in rows:
            this = f"{r.get('algorithm')} / {r.get('cost_model')}"
            if r.get("cost_model") == "numpy" or (this != owner and r.get("same_kernels_as") != owner):
                continue
            numpy = next((x.get("median_seconds") for x in rows if x.get("cost_model") == "numpy"), None)
            slow = r.get("median_seconds") is not None and numpy is not None and r["median_seconds"] > numpy
            if slow and not r.get("not_comparable"):
                r["why_slower"] = [w.to_dict() for w in got.with_numpy(numpy).why_slower()]

    def _kernels(self) -> Any:
        if self._kernel_cache is None:
            from fusionlab.backend.numba.plan import KernelCache

            self._kernel_cache = KernelCache()
        return self._kernel_cache

    # -- display -----------------------------------------------------------------------
    def graph_view(self, budget: Budget | None = None, draw: bool = True) -> tuple[str | None, str]:
        """``(svg, note)`` of the selected partition's graph for the fallback view: laid out
        at instruction level when it fits, else at block level, else ``None`` (the view
        summarises it); ``note`` says which, or why not. ``draw=False`` uses only layouts
        made before (a progressive update does not wait for one)."""
        report = self.report()
        sel = report["selected"]
        entry = find_entry(report, sel["algorithm"], sel["cost_model"])
        if not entry["blocks"]:
            return None, "no partition to draw yet"
        level = graph_level(report, entry)
        if level == "summary":
            return None, f"too large to draw here ({len(entry['blocks'])} blocks)"
        key = (self.batch, sel["algorithm"], sel["cost_model"], level, json.dumps(entry["blocks"]),
               json.dumps(entry["weights"]))
        if key not in self._dots:
            self._dots[key] = get_dot(report, entry, level=level)
        dot = self._dots[key]
        if len(dot) > MAX_DOT_CHARS:
            return None, f"too large to lay out here ({len(dot):,} characters of DOT)"
        if dot not in self._svgs:
            if not draw:
                return None, "the graph is laid out when the work is done"
            self._svgs[dot] = _layout(dot, budget if budget is not None else Budget(SVG_SECONDS))
        svg, note = self._svgs[dot]
        if level == "block":
            note = ("block level: one node per block, edges merged with their counts (the instruction level "
                    "is too dense to read)" + (f"; {note}" if note else ""))
        return svg, note

    def bundle(self, budget: Budget | None = None, draw: bool = True) -> dict[str, Any]:
        """The display bundle: the report (the extension draws it), the static fallback
        view as ``text/html`` (the graph laid out within ``budget``), and text."""
        from fusionlab.explore.viz.fallback import fallback_html

        report = self.report()
        svg, note = self.graph_view(budget, draw)
        return {MIME_TYPE: report, "text/html": fallback_html(report, svg, note), "text/plain": self.text()}

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return self.bundle()

    def widgets(self, repeat: int = 3, show: bool = True) -> Any:
        """The ipywidgets explorer over this result (for front ends without the extension);
        shown at once unless ``show`` is false. Returns the
        :class:`~fusionlab.explore.jupyter.explorer.Explorer`."""
        from fusionlab.explore.jupyter.explorer import Explorer

        explorer = Explorer(self, repeat=repeat)
        if show:
            explorer.show()
        return explorer

    def __repr__(self) -> str:
        a, c = self.selected
        got = self._selected_result()
        what = "not computed" if got is None else f"{got.kernels} blocks cost {format_cost(got.cost)}"
        return (f"<FuseResult {self.name or ''} batch {self.batch + 1}/{len(self.batches)}: "
                f"{len(self.program)} instructions, {a}/{c} {what}>")


def _run_batches(batches: Sequence[Program], prepared: Prepared) -> list[int]:
    """Each batch explored, by its number among the run's batches: the captured batch itself,
    else the next alike one (a capture made again), else the next prepared batch alike (the
    batches of an earlier exploration given again), in order."""
    out: list[int] = []
    for b in batches:
        start = out[-1] + 1 if out else 0
        ks = range(start, len(prepared.captured))
        same = next((k for k in ks if prepared.captured[k] is b), None)
        if same is None:
            signature = b.signature()
            same = next((k for k in ks if prepared.captured[k].signature() == signature), None)
            if same is None:
                same = next((k for k in ks if prepared.programs[k].signature() == signature), None)
        if same is None:
            raise ValueError("a batch explored is not one of the capture's batches")
        out.append(same)
    return out


def _windowed(program: Program, window: int | None) -> Program:
    """The first ``window`` instructions of ``program`` (itself when it is no longer): a
    valid program, its later frees and syncs left out.

    >>> from fusionlab.ir.examples import fig3
    >>> len(_windowed(fig3(), 5)), len(_windowed(fig3(), None)), len(fig3())
    (5, 17, 17)
    """
    if window is None or len(program) <= window:
        return program
    return Program(program.bases, program.instructions[:window])


def _layout(dot: str, budget: Budget) -> tuple[str | None, str]:
    """Lay out ``dot`` within ``budget`` (never past it): ``(svg, "")`` or ``(None, why)``."""
    from fusionlab.explore.viz.svg import SvgUnavailable, render_svg

    if budget.expired():
        return None, "not laid out: the time budget ran out"
    try:
        return render_svg(dot, budget=budget)[0], ""
    except (SvgUnavailable, BudgetExceeded) as exc:
        return None, f"not laid out: {exc}"


def _cost_model(model: Any, capture: Any) -> Any:
    """A cost model by name; ``time`` prices the cell's opaque calls by the seconds they
    took when the cell ran (``Externals.seconds``)."""
    seconds = getattr(getattr(capture, "externals", None), "seconds", None)
    if isinstance(model, str) and model.lower() == "time" and seconds:
        return get_cost_model(model, opaque_seconds=seconds)
    return get_cost_model(model)
