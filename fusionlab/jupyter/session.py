"""``FuseResult``: what a ``%%fuse`` cell leaves behind, as a Python object.

It holds the capture's batches and the explorer's state (batch, algorithm, cost model, a
manual partition, timings) and computes everything as data: :meth:`FuseResult.report` is
the document the views draw. Widgets live in :mod:`fusionlab.jupyter.explorer`; this
module imports none, so it works (and is tested) without a front end.

Examples
--------
>>> from fusionlab.examples import fig3
>>> r = FuseResult.from_program(fig3(), algorithms=["linear", "greedy"])
>>> r.partitions[("greedy", "bohrium")].cost_elements
38
>>> r.select(cost_model="robinson").selected
('greedy', 'robinson')
>>> outcome = r.merge(1, 2)          # manual mode: blocks are numbered from 1
>>> outcome.legal, outcome.reason
(False, 'FORBIDDEN')
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ..bytecode import Program
from ..costs import get_cost_model
from ..dot import get_dot
from ..partition import MergeCache, PartitionResult, SearchTrace, evaluate
from ..report import (
    DEFAULT_ALGORITHMS, DEFAULT_COST_MODELS, MIME_TYPE, ReportOptions, batch_summaries, get_report,
)
from ..wsp import IllegalMerge, PartitionState, WSPGraph

__all__ = ["FuseResult", "ManualOutcome"]


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

    def __str__(self) -> str:
        verdict = "legal" if self.legal else f"illegal ({self.reason.lower()}: {self.detail})"
        return f"{self.action}: {verdict}; cost {self.cost_before:g} -> {self.cost_after:g}"


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
        Search budgets (:class:`~fusionlab.report.ReportOptions`).
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
    ) -> None:
        if not batches:
            raise ValueError("nothing to explore: the cell recorded no array instruction "
                             "(fusionlab records NumPy array operations; write the cell with them)")
        self.batches = list(batches)
        self.capture = capture
        self.name = name
        self.algorithms = list(algorithms)
        self.models = [get_cost_model(m) for m in cost_models]
        self.options = ReportOptions() if options is None else dict(options)
        self.cache = MergeCache()
        self.batch = self._default_batch()
        alg = "greedy" if "greedy" in self.algorithms else self.algorithms[0]
        self.selected = selected or (alg, self.models[0].name)
        self._check_selected(*self.selected)
        self.manual: PartitionResult | None = None
        self.timings: dict[str, Any] | None = None
        self._baseline_namespace = baseline_namespace
        self._report: dict[str, Any] | None = None
        self._graphs: dict[int, WSPGraph] = {}
        self._svgs: dict[str, str | None] = {}
        self._dots: dict[int, dict[Any, str]] = {}  # per batch: DOT text by blocks  # layouts are slow for big graphs: one per DOT text

    @classmethod
    def from_program(cls, program: Program, **kwargs: Any) -> "FuseResult":
        """Explore one bytecode program."""
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
    def graph(self) -> WSPGraph:
        """Its WSP graph."""
        if self.batch not in self._graphs:
            self._graphs[self.batch] = WSPGraph(self.program)
        return self._graphs[self.batch]

    @property
    def model(self) -> Any:
        """The selected cost model object."""
        return next(m for m in self.models if m.name == self.selected[1])

    @property
    def partitions(self) -> dict[tuple[str, str], PartitionResult]:
        """Every algorithm x cost model partition of the current batch (cached)."""
        from ..partition import partition
        from ..report import _options

        return {(a, m.name): partition(self.program, a, m, cache=self.cache, **_options(a, self.options))
                for m in self.models for a in self.algorithms}

    @property
    def costs(self) -> dict[tuple[str, str], float]:
        """The cost of each partition in :attr:`partitions`."""
        return {k: r.cost for k, r in self.partitions.items()}

    @property
    def current(self) -> PartitionResult:
        """The selected partition (the manual one in manual mode)."""
        if self.selected[0] == "manual" and self.manual is not None:
            return self.manual
        return self.partitions[self.selected]

    @property
    def trace(self) -> SearchTrace | None:
        """The branch-and-bound trace of ``optimal`` under the selected cost model."""
        r = self.partitions.get(("optimal", self.selected[1]))
        return None if r is None else r.trace

    def report(self) -> dict[str, Any]:
        """The explorer's JSON document for the current state (see :mod:`fusionlab.report`)."""
        if self._report is None:
            notices = []
            if self.capture is not None:
                notices = [{"kind": n.kind.name.lower(), "message": n.message, "line": n.line}
                           for n in self.capture.notices]
            extra = [self.manual] if self.manual is not None else []
            self._report = get_report(
                self.program, algorithms=self.algorithms, cost_models=self.models, selected=self.selected,
                name=self.name, source=getattr(self.capture, "source", "") or "",
                batches=batch_summaries(self.batches), batch=self.batch, notices=notices, cache=self.cache,
                options=self.options, extra=extra, timings=self.timings,
                dot_cache=self._dots.setdefault(self.batch, {}),
            )
        return self._report

    def to_json(self, indent: int | None = None) -> str:
        """The report as JSON text."""
        return json.dumps(self.report(), indent=indent)

    def to_dot(self) -> str:
        """DOT source of the selected partition's graph."""
        entry = next((p for p in self.report()["partitions"]
                      if (p["algorithm"], p["cost_model"]) == self.selected and p["dot"] is not None), None)
        if entry is not None:
            return self.report()["dots"][entry["dot"]]
        return get_dot(self.current, self.graph, model=self.model)

    def text(self) -> str:
        """A plain-text summary: the listing with blocks, then the cost of every partition."""
        r = self.current
        lines = [f"fusionlab: batch {self.batch + 1} of {len(self.batches)}, {len(self.program)} instructions",
                 r.format_text(), "", f"{'algorithm':<12} " + " ".join(f"{m.name:>14}" for m in self.models)]
        parts = self.partitions
        for a in self.algorithms:
            lines.append(f"{a:<12} " + " ".join(f"{parts[(a, m.name)].cost:>14g}" for m in self.models))
        return "\n".join(lines)

    # -- state changes -----------------------------------------------------------------
    def _changed(self) -> "FuseResult":
        self._report = None
        return self

    def select(self, algorithm: str | None = None, cost_model: str | None = None) -> "FuseResult":
        """Show another partition (``algorithm="manual"`` shows the hand-made one)."""
        algorithm = algorithm or self.selected[0]
        cost_model = get_cost_model(cost_model).name if cost_model else self.selected[1]
        self._check_selected(algorithm, cost_model)
        if algorithm == "manual" and self.manual is None:
            self.manual = self._manual_from(self.partitions[(self.selected[0], cost_model)].blocks)
        self.selected = (algorithm, cost_model)
        if self.manual is not None and self.manual.cost_model != cost_model:
            self.manual = self._manual_from(self.manual.blocks)
        return self._changed()

    def set_batch(self, batch: int) -> "FuseResult":
        """Explore batch ``batch`` (0-based); repeated batches reuse cached partitions."""
        if not 0 <= batch < len(self.batches):
            raise IndexError(f"batch {batch} does not exist: batches are numbered 0 to {len(self.batches) - 1}")
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
             progress: Callable[[str, int, int], None] | None = None) -> list[Any]:
        """Compile and time the selected algorithm's partition under every cost model (or
        ``cost_models``) against NumPy eager, all batches of the cell; returns the records
        and stores them in the report's ``timings``."""
        from ..execute import compare

        target = self.capture if self.capture is not None else self.program
        algorithm = self.selected[0] if self.selected[0] != "manual" else "greedy"
        models = [get_cost_model(m) for m in cost_models] if cost_models else list(self.models)
        records = compare(target, [algorithm], models, repeat=repeat, baseline=self._baseline(),
                          progress=progress)
        self.timings = {"repeat": repeat, "records": [_clean(r.to_dict()) for r in records]}
        self._changed()
        return records

    def _baseline(self) -> Callable[[], None] | None:
        # the cell again with plain NumPy, on a copy of the namespace it started from, so
        # timing never changes the user's variables
        if self.capture is None or not getattr(self.capture, "source", ""):
            return None
        source, start = self.capture.source, self._baseline_namespace or {}

        def baseline() -> None:
            import contextlib
            import io

            ns = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in start.items()}
            with contextlib.redirect_stdout(io.StringIO()):
                exec(compile(source, "<numpy>", "exec"), ns)

        return baseline

    # -- display -----------------------------------------------------------------------
    def bundle(self) -> dict[str, Any]:
        """The display bundle: the report, an SVG of the graph, and text."""
        from ..viz.svg import SvgUnavailable, render_svg

        data: dict[str, Any] = {MIME_TYPE: self.report(), "text/plain": self.text()}
        dot = self.to_dot()
        if dot not in self._svgs:
            try:
                self._svgs[dot] = render_svg(dot)[0]
            except SvgUnavailable:
                self._svgs[dot] = None
        if self._svgs[dot] is not None:
            data["image/svg+xml"] = self._svgs[dot]
        return data

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return self.bundle()

    def __repr__(self) -> str:
        a, c = self.selected
        return (f"<FuseResult {self.name or ''} batch {self.batch + 1}/{len(self.batches)}: "
                f"{len(self.program)} instructions, {a}/{c} {self.current.kernels} blocks cost {self.current.cost:g}>")


def _clean(d: dict[str, Any]) -> dict[str, Any]:
    # JSON has no infinity or NaN (a speed-up over a zero-time run): the report says null
    out = dict(d)
    for k, v in out.items():
        if isinstance(v, float) and (v != v or v in (float("inf"), float("-inf"))):
            out[k] = None
    return out
