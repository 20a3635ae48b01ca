"""``compare``: the fused partitions of several algorithms and cost models timed against
NumPy eager, in one process, by one protocol.

The protocol (issue 34; docs/timing.md):

1. **Warm-ups.** NumPy's first run of the cell; each fused row's first run, which
   compiles its kernels (the compile budget's, not the runs').
2. **The same kernels, timed once.** Rows whose plans are the same kernels in the same
   order (:func:`~fusionlab.pipeline.planning.plans_key`) share one variant; their rows
   say "same kernels as greedy / bohrium".
3. **The check** against plain NumPy, once, on each variant's warm-up values.
4. **The same work on both sides.** Random draws are drawn by both sides or by neither
   (:class:`Draws`: when NumPy's side runs the cell, which draws, each fused run draws the
   same distributions and sizes again on generators of its own). When NumPy's side runs
   the cell, a third variant times NumPy on the recorded operations alone: a cell whose
   plain run takes more than :data:`OUTSIDE_RATIO` times that did work the recording does
   not hold (fields of a structured array, Python loops on scalars), and its rows say
   the speed-up is not comparable instead of giving a ratio of unequal work.
5. **Interleaved rounds**, the order rotated each round (:mod:`fusionlab.pipeline.rounds`),
   the memory allocator held steady throughout (:mod:`fusionlab.runtime.allocator`: glibc
   moving its mmap threshold made the same rounds take 1.8 or 11.7 ms).
6. **Intervals.** Each speed-up, ``median(NumPy) / median(row)``, carries a 95 % bootstrap
   interval over the paired rounds (:mod:`fusionlab.support.intervals`); rows whose
   intervals overlap each other (or 1x) are marked not different.
"""

from __future__ import annotations

import contextlib
import enum
import io
import math
import statistics
import time
import warnings
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from fusionlab.support.budget import Budget, BudgetExceeded, Interrupt
from fusionlab.support.intervals import Interval, overlap, ratio_interval
from fusionlab.ir.bytecode import Opcode, Program
from fusionlab.backend.numba.codegen import KernelSource
from fusionlab.passes.reroll import REROLL_SECONDS
from fusionlab.passes.rewrites import Rewrite
from fusionlab.costs.timemodel import TimeModel, load_figures, predict_seconds, runs_block_by_block
from fusionlab.analysis.wsp import WSPGraph
from fusionlab.pipeline.compile_watch import OUR_MODULES, CompileBudgetSpent, CompileWatch
from fusionlab.runtime.check import CheckReport, Mismatch, check_namespace, plain_namespace, reduction_terms
from fusionlab.runtime.errors import propagate
from fusionlab.runtime.allocator import steady_allocator
from fusionlab.backend.numba.driver import Driver
from fusionlab.backend.numba.plan import DEFAULT_MIN_SIZE, KernelCache, Plan
from fusionlab.runtime.reference import Externals, Storage, run_reference
from fusionlab.backend.numba.threads import cpu_snapshot, others_busy
from fusionlab.pipeline.timed_runs import CHECK_RUNS, LONG_RUN_SECONDS, RunBudget
from fusionlab.pipeline.planning import plans_key
from fusionlab.pipeline.rounds import Rounds, Variant, interleave
from fusionlab.pipeline.runner import RunResult, _error, _values, run_config
from fusionlab.pipeline import PipelineCaches, PipelineConfig, plans, prepare_kept, target_parts

__all__ = ["compare", "Record", "Comparison", "Draws", "format_records", "OUTSIDE_RATIO"]

#: a cell whose plain NumPy run takes this many times NumPy's run of its recorded
#: operations did work outside the recording: its speed-ups would compare unequal work.
#: The recorded operations run one NumPy call per instruction, as the cell's own calls do
#: (a cell fully recorded measured 0.8-1.3x); the structured-array Gray-Scott of issue 34
#: measured 2,600x.
OUTSIDE_RATIO = 2.0


class Draws(enum.Enum):
    """Where a comparison's random draws are timed."""

    #: NumPy's side runs the cell, which draws; each fused run draws the same again
    BOTH = "both"
    #: both sides read the draws capture recorded (NumPy's side replays the recording)
    NEITHER = "neither"
    #: the program draws nothing
    NONE = "none"


@dataclass
class Record:
    """One row of a comparison."""

    cost_model: str
    algorithm: str
    blocks: int
    kernels: int
    cost: float | None
    compile_seconds: float
    median_seconds: float
    min_seconds: float
    speedup: float
    max_abs_error: float | None
    fallbacks: list[str] = field(default_factory=list)
    #: quartiles of the timed runs, and their spread ((q3 - q1) / median)
    q1_seconds: float = 0.0
    q3_seconds: float = 0.0
    spread: float = 0.0
    #: every timed run's seconds, in round order
    samples: list[float] = field(default_factory=list)
    #: Numba threads the fused runs used (0: NumPy's row)
    threads: int = 0
    #: other processes kept at least half a core busy while this row was timed
    busy: bool = False
    warnings: list[str] = field(default_factory=list)
    #: what the ``time`` cost model predicted for this run (:func:`fusionlab.costs.timemodel.predict_seconds`
    #: with this machine's calibration, or the default figures); ``None`` for NumPy's row
    predicted_seconds: float | None = None
    #: why the row was not timed ("not timed: compile budget of 30 s spent after 12 of 40
    #: kernels"); empty when it was (its times are then NaN)
    not_timed: str = ""
    #: why a timed row's values were not checked against plain NumPy ("not checked: the time
    #: budget ..."); empty when they were (and for NumPy's row, the reference)
    not_checked: str = ""
    #: the earlier row whose plans are this row's ("greedy / bohrium"): the same kernels in
    #: the same order, timed once; its times are that row's. Empty when timed on its own
    same_kernels_as: str = ""
    #: the speed-up's 95 % bootstrap interval over the paired rounds (NaN: fewer than two)
    speedup_low: float = float("nan")
    speedup_high: float = float("nan")
    #: the rows ("greedy / bohrium", or "numpy" for 1x) whose intervals overlap this row's:
    #: not called different from it
    not_different: list[str] = field(default_factory=list)
    #: why this row has no speed-up figure: the two sides would not do the same work
    not_comparable: str = ""
    #: where a row slower than NumPy spent its time (filled in by a profile)
    why_slower: list[dict[str, Any]] = field(default_factory=list)

    @property
    def label(self) -> str:
        """"greedy / bohrium" (NumPy's row: "numpy")."""
        return "numpy" if self.cost_model == "numpy" else f"{self.algorithm} / {self.cost_model}"

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


class Comparison(list):  # type: ignore[type-arg]
    """The records of a comparison (NumPy eager's first), and how they were timed:
    ``protocol`` says how many rounds ran, where the random draws were timed, and what
    NumPy's run of the recorded operations took."""

    def __init__(self, records: Sequence[Record] = (), protocol: Mapping[str, Any] | None = None) -> None:
        super().__init__(records)
        self.protocol: dict[str, Any] = dict(protocol or {})


def compare(
    target: Any,
    algorithms: Sequence[str] = ("linear", "greedy", "optimal"),
    cost_models: Sequence[str] = ("bohrium", "max_contract", "max_locality", "robinson"),
    *,
    repeat: int = 5,
    min_size: int = DEFAULT_MIN_SIZE,
    cache: KernelCache | None = None,
    baseline: Callable[[], Any] | None = None,
    progress: Callable[[str, int, int], None] | None = None,
    driver: str = "python",
    compile_seconds: float | None = None,
    interrupt: Interrupt | None = None,
    keep_on_interrupt: bool = False,
    reroll: bool = True,
    run_seconds: float | Budget | None = None,
    caches: PipelineCaches | None = None,
    options: Mapping[str, Mapping[str, Any]] | None = None,
    config: PipelineConfig | None = None,
    partitions: Mapping[int, Sequence[Sequence[int]]] | None = None,
    variants: Sequence[Mapping[int, Sequence[Sequence[int]]]] | None = None,
) -> Comparison:
    """Time the fused partitions of every algorithm × cost model against NumPy eager, by
    the protocol of this module's text; returns the records, NumPy eager's first.

    NumPy eager is ``baseline`` when given (the Jupyter magic runs the cell on a copy of the
    user's namespace), else the captured source run plainly (for a bytecode program, or a
    capture stopped at its budget, the reference executor replaying the recording). Times
    exclude compilation (a warm-up run compiles every kernel and is reported as
    ``compile_seconds``). ``progress(label, done, total)`` is called before each row is
    prepared, after each kernel compiled (``done`` still the rows done; the label counts
    the kernels), before the rounds and once at the end. Each partition runs as
    :func:`~fusionlab.pipeline.runner.run` runs it with ``driver``. Each fused record carries
    ``predicted_seconds``: what the ``time`` cost model predicts for that run, from this
    machine's calibration (``fusionlab calibrate``; the default figures without one).

    ``compile_seconds`` bounds the preparation of the rows over the whole comparison:
    partitioning, planning, loading and compiling kernels (checked between kernels,
    :mod:`fusionlab.pipeline.compile_watch`) and the warm-up run. A row whose kernels do not
    fit is not timed and says so in ``Record.not_timed`` ("compile budget of 30 s spent
    after 12 of 40 kernels"). ``interrupt``: an armed :class:`~fusionlab.support.budget.Interrupt`
    checked between kernels and runs. ``keep_on_interrupt``: Kernel -> Interrupt
    (``KeyboardInterrupt``) returns the rounds completed, rows without one marked
    interrupted (else it propagates). ``reroll``: the fused rows run the batches rerolled.
    ``caches``: the pipeline's caches (the explorer keeps them between clicks), filled in.
    ``options``: per algorithm, the options its search takes. ``config``: the rows'
    configuration but their algorithm, cost model and options, in place of ``min_size``
    and ``reroll``. ``partitions``: batch index to blocks chosen elsewhere (a sweep's stored
    partition, with a ``config`` for given partitions), planned as given in every row.
    ``variants``: partitions given per row instead of the grid: one row each (batch index to
    blocks, the batches not named partitioned by the first algorithm), under the first cost
    model, in order (a waterfall's partitions, step by step, timed in the same rounds).

    ``run_seconds`` bounds the timed runs and the check (``None``: no limit; a
    :class:`~fusionlab.support.budget.Budget` brings its own clock): a round starts only when it
    fits; a cell too long for one round gets each variant that fits timed once
    (:mod:`fusionlab.pipeline.rounds`). NumPy's warm-up of a long cell
    (:data:`~fusionlab.pipeline.timed_runs.LONG_RUN_SECONDS`) is one of its samples when fewer
    rounds ran than asked. The check against plain NumPy (one plain run and the reference
    replay) is made once; when it does not fit, the rows say ``not checked``.

    Examples
    --------
    >>> from fusionlab.capture import capture
    >>> cell = capture("import numpy as np\\na = np.arange(1000.0)\\nb = np.sqrt(a * 2.0 + 1.0)")
    >>> records = compare(cell, ["greedy", "singleton"], ["bohrium"], repeat=3, min_size=0)
    >>> [r.label for r in records], records.protocol["rounds"], records.protocol["draws"]
    (['numpy', 'greedy / bohrium', 'singleton / bohrium'], 3, 'none')
    >>> all(r.speedup_low <= r.speedup <= r.speedup_high for r in records[1:])
    True
    """
    batches, inputs, externals = target_parts(target)
    cache = cache or KernelCache()
    spent = [0.0]  # seconds of the compile budget used by the rows so far
    if variants is not None:
        rows = [(cost_models[0], algorithms[0], v) for v in variants]
    else:
        rows = [(model, algorithm, partitions) for model in cost_models for algorithm in algorithms]
    total = 1 + len(rows)
    runs = RunBudget(run_seconds, repeat, interrupt)
    checker = _Check(target, runs)
    caches = caches if caches is not None else PipelineCaches()
    shared: dict[Any, _Ready] = {}   # the rows prepared, by their plans: the same plans timed once
    template = config if config is not None else run_config("greedy", "bohrium", min_size, reroll)
    numpy_side = _NumpySide.of(target, baseline, batches, inputs, externals)
    if progress is not None:
        progress("NumPy eager", 0, total)
    prepared: list[Record | _Ready] = []
    numpy: Variant | None = None
    before = cpu_snapshot()
    interrupted = ""
    with steady_allocator() as allocator:   # the same heap behaviour in every round (runtime/allocator.py)
        try:
            numpy = numpy_side.warmed(runs)
            runs.estimate = runs.numpy = numpy.estimate
            figures = load_figures()
            for k, (model, algorithm, given) in enumerate(rows):
                label = f"{algorithm} / {getattr(model, 'name', model)}"
                if progress is not None:
                    progress(label, 1 + k, total)
                left = None if compile_seconds is None else max(compile_seconds - spent[0], 0.0)
                row_config = replace(template, algorithm=algorithm, cost_model=model,
                                     options=tuple(sorted((options or {}).get(algorithm, {}).items())))
                row = _Row(target, row_config, cache, Budget(left, interrupt=interrupt), driver, compile_seconds, spent,
                           runs=runs, caches=caches, shared=shared, redraw=numpy_side.redraw, partitions=given)
                try:
                    prepared.append(row.prepare(figures, progress, label, 1 + k, total))
                except KeyboardInterrupt:
                    if not keep_on_interrupt:
                        raise
                    prepared.append(_not_timed(row.name, algorithm, row.interrupted))
                    raise
            variants = _distinct([p for p in prepared if isinstance(p, _Ready)])
            checked = {id(v): checker(v.values) for v in variants}
            recorded = numpy_side.recorded(runs)
            if progress is not None:
                progress("interleaved rounds", total - 1, total)
            timed = [numpy] + [v.variant for v in variants] + ([recorded] if recorded is not None else [])
            done = interleave(timed, runs, repeat)
            if done.interrupted and not keep_on_interrupt:
                raise KeyboardInterrupt
            interrupted = "not timed: interrupted (Kernel -> Interrupt) before its first round" if done.interrupted else ""
        except KeyboardInterrupt:
            if not keep_on_interrupt:
                raise
            interrupted = interrupted or "not timed: interrupted (Kernel -> Interrupt) before the timed rounds"
            done = Rounds(0, 0, [], interrupted=True)
            variants = _distinct([p for p in prepared if isinstance(p, _Ready)])
            checked, recorded = {}, None
    busy = others_busy(before, cpu_snapshot())
    records = Comparison()
    records.append(_numpy_record(numpy, runs, done, busy, interrupted))
    for (model, algorithm, _), p in zip(rows, prepared):
        if isinstance(p, Record):
            records.append(p)
        else:
            records.append(p.record(runs, done, busy, checked.get(id(p.first), (None, None, "")), interrupted))
    for model, algorithm, _ in rows[len(prepared):]:
        records.append(_not_timed(getattr(model, "name", model), algorithm,
                                  "not timed: interrupted (Kernel -> Interrupt) before this row"))
    ready = [p for p in prepared if isinstance(p, _Ready)]
    records.protocol = _settle(records, numpy, ready, recorded, done, numpy_side, repeat)
    records.protocol["allocator"] = allocator.described()
    if not done.interrupted:
        _explain_slower(records, ready, runs, cache)
    if progress is not None:
        progress("done", total, total)
    return records


def _explain_slower(records: Comparison, ready: Sequence[_Ready], runs: RunBudget, cache: KernelCache) -> None:
    """A row slower than NumPy says where its time went: its plans profiled block by block
    (:func:`fusionlab.pipeline.profiling.profile_plans`, two rounds, within the run budget),
    and :func:`~fusionlab.pipeline.profiling.why_slower`'s reasons in ``why_slower``. Rows
    with the same kernels share the answer."""
    from fusionlab.pipeline.profiling import profile_plans, why_slower

    numpy = records[0].median_seconds
    by_label = {r.label: r for r in records[1:]}
    answers: dict[str, list[dict[str, Any]]] = {}
    for row in ready:
        rec = by_label.get(row.label)
        if rec is None or rec.not_timed or rec.not_comparable or not rec.speedup < 1.0:
            continue
        owner = row.first.label
        if owner not in answers:
            cost = 4.0 * rec.median_seconds   # a warm-up and two block-by-block rounds, and a driver run
            if not runs.fits(cost):
                rec.warnings.append(f"why it is slower than NumPy not profiled: about {cost:.2g} s does not fit in "
                                    f"{runs.described()}")
                continue
            t = runs.clock()
            try:
                profile = profile_plans(row.plans, row.fused.externals, row.fused.inputs, cache,
                                        batches=[p.program for p in row.plans], repeat=2, numpy_seconds=numpy,
                                        algorithm=row.algorithm, cost_model=row.name)
                answers[owner] = [w.to_dict() for w in why_slower(profile, numpy)]
            except Exception as exc:  # a profile is an explanation, never a reason to lose the row
                rec.warnings.append(f"why it is slower than NumPy not profiled: {type(exc).__name__}: {exc}")
                continue
            finally:
                runs.spend(runs.clock() - t)
        rec.why_slower = answers[owner]


# -- NumPy's side -----------------------------------------------------------------------

@dataclass
class _NumpySide:
    """What NumPy eager runs (the cell, or the recording replayed), where the draws are
    timed, and NumPy's run of the recorded operations when the cell is what runs."""

    run: Callable[[], Any]
    replay: Callable[[], Any]
    #: whether NumPy's side runs the cell itself (its own Python, its own draws)
    runs_cell: bool
    draws: Draws
    #: what each fused run (and the recorded operations' run) adds so both sides draw
    redraw: Callable[[], None] | None
    #: draws capture recorded that cannot be drawn again (not NumPy's random-state objects)
    missing: int = 0

    @classmethod
    def of(cls, target: Any, baseline: Callable[[], Any] | None, batches: Sequence[Program],
           inputs: Mapping[str, np.ndarray], externals: Externals) -> "_NumpySide":
        from fusionlab.capture import Capture

        def replay() -> None:
            st = Storage(inputs)
            for b in batches:
                run_reference(b, externals=externals, storage=st)

        if baseline is None and isinstance(target, Capture) and target.source and target.stopped is None:
            source = target.source

            def baseline() -> None:
                with contextlib.redirect_stdout(io.StringIO()):
                    exec(compile(source, "<numpy>", "exec"), {"__name__": "__main__"})
        runs_cell = baseline is not None
        keys = [ins.attr("key") for b in batches for ins in b
                if ins.opcode is Opcode.RANDOM and ins.attr("key") is not None]
        keys = list(dict.fromkeys(keys))
        if not keys:
            return cls(baseline or replay, replay, runs_cell, Draws.NONE, None)
        if not runs_cell:
            return cls(replay, replay, False, Draws.NEITHER, None)
        again = [externals.redraws[k] for k in keys if k in externals.redraws]

        def redraw() -> None:
            for draw in again:
                draw()

        return cls(baseline, replay, True, Draws.BOTH, redraw, len(keys) - len(again))

    def warmed(self, runs: RunBudget) -> Variant:
        """NumPy's variant after its warm-up (one run, on the runs' budget)."""
        t = runs.clock()
        self.run()
        warm = runs.clock() - t
        runs.spend(warm)
        return Variant("numpy", self.run, warm, warm_up=warm)

    def recorded(self, runs: RunBudget) -> Variant | None:
        """NumPy on the recorded operations alone, warmed up, when NumPy's side runs the
        cell (else it is what NumPy's side runs); ``None`` when its warm-up does not fit."""
        if not self.runs_cell or not runs.fits(runs.numpy or 0.0):
            return None
        redraw, replay = self.redraw, self.replay

        def both() -> None:
            if redraw is not None:
                redraw()
            replay()

        t = runs.clock()
        both()
        warm = runs.clock() - t
        runs.spend(warm)
        return Variant("numpy, recorded operations", both, warm)

    def describe(self) -> str:
        """Where the draws were timed, in words."""
        if self.draws is Draws.NONE:
            return "no random draws"
        if self.draws is Draws.NEITHER:
            return "random draws: in neither side (both read the recorded draws)"
        note = "random draws: timed on both sides (each fused run draws the same distributions and sizes again)"
        if self.missing:
            note += f"; {self.missing} draw(s) from generators fusionlab cannot copy are timed on NumPy's side only"
        return note


def _fewer(done: Rounds) -> str:
    """Why a variant has fewer runs than asked: the budget's reason, or the interrupt."""
    return done.fewer.split(": ", 1)[-1] if done.fewer else "interrupted (Kernel -> Interrupt)"


def _numpy_record(numpy: Variant | None, runs: RunBudget, done: Rounds, busy: float, interrupted: str) -> Record:
    """NumPy eager's row from its rounds (its warm-up one of them when it is long and fewer
    rounds ran than asked)."""
    if numpy is None:
        return _not_timed("numpy", "eager", interrupted or "not timed: interrupted (Kernel -> Interrupt)")
    times = numpy.times()
    counted = len(times) < runs.repeat and (numpy.warm_up >= LONG_RUN_SECONDS or not times)
    if counted:   # a long cell's warm-up is one of its samples when fewer rounds ran
        times = [numpy.warm_up] + times
    extra = _spread(times, busy)
    if len(times) < runs.repeat:
        warm = " (the warm-up counted as one)" if counted else ""
        extra["warnings"].append(f"{len(times)} of {runs.repeat} timed runs{warm}: {_fewer(done)}")
    return Record("numpy", "eager", 0, 0, None, 0.0, statistics.median(times), min(times), 1.0, None, **extra)


# -- the fused rows ---------------------------------------------------------------------

@dataclass
class _Ready:
    """A fused row prepared for the rounds: its kernels compiled and warmed up."""

    name: str
    algorithm: str
    cost: float
    blocks: int
    plans: list[Plan]
    fused: Driver
    variant: Variant
    first: "_Ready"
    values: dict[str, Any]
    result: RunResult
    predicted: float | None
    warnings: list[str]
    compile_seconds: float
    #: the earlier row with these kernels ("greedy / bohrium"), or ""
    same_as: str = ""

    @property
    def label(self) -> str:
        return f"{self.algorithm} / {self.name}"

    def record(self, runs: RunBudget, done: Rounds, busy: float,
               checked: tuple[float | None, CheckReport | None, str], interrupted: str) -> Record:
        """The row's record from its variant's rounds."""
        times = self.variant.times()
        if not times:
            why = interrupted or (f"not timed: {runs.described()} spent (one run takes about "
                                  f"{self.variant.estimate:.2g} s; its kernels are ready)")
            rec = _not_timed(self.name, self.algorithm, why, self.blocks, self.result.kernels, self.cost,
                             self.compile_seconds)
            rec.same_kernels_as = self.same_as
            return rec
        error, check, not_checked = checked
        med = statistics.median(times)
        extra = _spread(times, busy)
        extra["threads"] = self.fused.choice.threads if self.fused.choice is not None else 0
        extra["predicted_seconds"] = self.predicted
        notes = [f"same kernels as {self.same_as}: timed once"] if self.same_as else []
        extra["warnings"] = notes + extra["warnings"] + list(self.warnings)
        if len(times) < runs.repeat:
            extra["warnings"].append(f"{len(times)} of {runs.repeat} timed runs: {_fewer(done)}")
        if not_checked:
            extra["warnings"].append(not_checked)
        if check is not None and not check.ok:
            extra["warnings"] += [f"differs from plain NumPy: {m}" for m in check.mismatches[:5]]
        return Record(self.name, self.algorithm, self.blocks, self.result.kernels, self.cost, self.compile_seconds,
                      med, min(times), float("nan"), error, self.result.fallbacks, **extra, not_checked=not_checked,
                      same_kernels_as=self.same_as)


def _distinct(ready: Sequence[_Ready]) -> list[_Ready]:
    """The rows that own their variant (the first with those kernels)."""
    return [r for r in ready if r.first is r]


def _outside_everywhere(paired: tuple[list[float], list[float]]) -> bool:
    """Whether the cell's plain run exceeds :data:`OUTSIDE_RATIO` times NumPy on its recorded
    operations however the rounds are read: by the fastest run of each (load only ever adds
    time, so the minimums are what a busy machine disturbs least) and by the low end of the
    ratio's interval over the paired rounds. Work done outside the recording is there in
    every round; a round slowed by another process is not (a sub-millisecond cell preempted
    once would otherwise read as "not comparable").

    >>> _outside_everywhere(([3e-4, 9e-3], [5e-4, 5e-4]))   # one round preempted
    False
    >>> _outside_everywhere(([5e-2, 6e-2], [2e-5, 3e-5]))   # a structured-array loop
    True
    """
    cell, recorded = paired
    if not cell or not recorded or min(recorded) <= 0:
        return bool(cell)
    if min(cell) / min(recorded) <= OUTSIDE_RATIO:
        return False
    return ratio_interval(cell, recorded).low > OUTSIDE_RATIO


def _settle(records: Comparison, numpy: Variant | None, ready: Sequence[_Ready], recorded: Variant | None,
            done: Rounds, side: _NumpySide, repeat: int) -> dict[str, Any]:
    """Speed-ups, their intervals, which rows are not different, and the comparison's
    protocol (rounds, draws, the recorded operations' time)."""
    by_label = {r.label: r for r in ready}
    outside = ""
    recorded_seconds = None
    if numpy is not None and recorded is not None and recorded.samples and records[0].samples:
        recorded_seconds = statistics.median(recorded.times())
        ratio = records[0].median_seconds / recorded_seconds if recorded_seconds > 0 else math.inf
        if ratio > OUTSIDE_RATIO and _outside_everywhere(done.paired(numpy, recorded)):
            outside = (f"not comparable: the cell's plain NumPy run takes {records[0].median_seconds:.3g} s, NumPy "
                       f"on the operations capture recorded {recorded_seconds:.3g} s ({ratio:,.0f}x): the rest ran "
                       "outside the recording (fields of a structured array, Python loops on scalars, calls capture "
                       "does not trace), so the fused rows do less work than NumPy's and a speed-up would compare "
                       "unequal work")
    intervals: dict[str, Interval | None] = {}
    for rec in records[1:]:
        if rec.not_timed:
            continue
        got = by_label.get(rec.label)
        if got is None or numpy is None:
            continue
        if outside:
            rec.not_comparable = outside
            rec.speedup = rec.speedup_low = rec.speedup_high = float("nan")
            continue
        rec.speedup = records[0].median_seconds / rec.median_seconds if rec.median_seconds else math.inf
        a, b = done.paired(numpy, got.variant)
        interval = ratio_interval(a, b) if a else None
        if interval is not None and interval.known:
            rec.speedup_low, rec.speedup_high = interval.low, interval.high
            intervals[rec.label] = interval
        else:
            intervals[rec.label] = None   # one round: no interval, so no row is called different from it
    labels = list(intervals)
    for rec in records[1:]:
        mine = intervals.get(rec.label, "absent")
        if mine == "absent":
            continue
        near = [] if mine is not None and not mine.contains(1.0) else ["numpy"]
        for other in labels:
            theirs = intervals[other]
            if other != rec.label and (mine is None or theirs is None or overlap(mine, theirs)):
                near.append(other)
        rec.not_different = near
    timed_rounds = done.rounds
    return {
        "rounds": timed_rounds, "asked": repeat, "warmup_rounds": done.warmup_rounds, "rotated": True,
        "orders": done.orders, "draws": side.draws.value, "draws_note": side.describe(),
        "numpy_runs": "the cell" if side.runs_cell else "the recording replayed by NumPy",
        "recorded_seconds": recorded_seconds, "not_comparable": outside,
        "interval": "95% bootstrap of the ratio of medians over the paired rounds",
        "fewer": done.fewer, "interrupted": done.interrupted,
    }


class _Check:
    """The check against plain NumPy, made once for every row of a comparison within its
    run budget: the captured source run plainly (or the reference replay) and the replay
    with its error bounds, then each row's values compared with them."""

    def __init__(self, target: Any, runs: RunBudget) -> None:
        self.target, self.runs = target, runs
        self.made: tuple[dict[str, Any], dict[str, Any], Any] | None = None  # replayed, bounds, plain

    def __call__(self, values: Mapping[str, Any]) -> tuple[float | None, CheckReport | None, str]:
        """``(max_abs_error, report, why not checked)`` of a row's ``values``."""
        if self.made is None:
            need = CHECK_RUNS * (self.runs.numpy or 0.0)
            if not self.runs.fits(need):
                return None, None, (f"not checked: the check against plain NumPy (a plain run and the reference "
                                    f"replay, about {need:.2g} s) does not fit in {self.runs.described()}")
            t = self.runs.clock()
            self.made = self._make()
            self.runs.spend(self.runs.clock() - t)
        replayed, bounds, plain = self.made
        error = max((_error(values[k], replayed[k]) for k in replayed), default=0.0)
        if isinstance(plain, CheckReport):  # the plain run failed: its report says why
            return error, plain, ""
        terms = reduction_terms(target_parts(self.target)[0])
        return error, check_namespace(values, plain, terms=terms, bounds=bounds), ""

    def _make(self) -> tuple[dict[str, Any], dict[str, Any], Any]:
        from fusionlab.capture import Capture

        batches, inputs, externals = target_parts(self.target)
        with np.errstate(all="ignore"):  # the user's warnings are the plain run's, not the replay's
            ref, ref_bounds = propagate(batches, externals, dict(inputs))
        replayed, bounds = _values(self.target, ref), _values(self.target, ref_bounds)
        plain: Any = replayed
        # a capture stopped at its budget: the program is the recorded part, not the source
        if isinstance(self.target, Capture) and self.target.source and self.target.stopped is None:
            try:
                plain = plain_namespace(self.target.source, draws=self.target.draws)
            except Exception as exc:  # the user's program: any exception
                plain = CheckReport(mismatches=[Mismatch("<program>", f"fails under plain NumPy: "
                                                         f"{type(exc).__name__}: {exc}")])
        return replayed, bounds, plain


def _not_timed(model: str, algorithm: str, why: str, blocks: int = 0, kernels: int = 0,
               cost: float | None = None, compile_seconds: float = 0.0) -> Record:
    """A row that was not timed, and why (its times are NaN: unknown, not zero)."""
    nan = float("nan")
    return Record(model, algorithm, blocks, kernels, cost, compile_seconds, nan, nan, nan, None,
                  q1_seconds=nan, q3_seconds=nan, spread=nan, warnings=[why], not_timed=why)


@dataclass
class _Row:
    """One fused row of :func:`compare`: its plans, then its kernels within the compile
    budget, then its warm-up run (:meth:`prepare`); the rounds time it afterwards."""

    target: Any
    #: the pipeline's configuration of this row (:func:`run_config`: the same as ``run``'s)
    config: PipelineConfig
    cache: KernelCache
    budget: Budget
    driver: str
    #: the whole comparison's compile budget (for the messages), and the seconds it used
    total_seconds: float | None = None
    spent: list[float] = field(default_factory=lambda: [0.0])
    #: called every 100 kernel modules imported (done, of)
    on_load: Callable[[int, int], None] | None = None
    #: why the row stopped on Kernel -> Interrupt, with its kernels ready by then
    interrupted: str = "not timed: interrupted (Kernel -> Interrupt)"
    #: the comparison's run budget
    runs: RunBudget = field(default_factory=lambda: RunBudget(None, 1))
    #: the pipeline's caches: prepared batches, partitions, WSP graphs, plans (kept between clicks)
    caches: PipelineCaches = field(default_factory=PipelineCaches)
    #: where the budget cut rerolling or the dead-writes passes of the batches (each row's
    #: warnings say so: the rest ran as captured)
    cut: list[Rewrite] = field(default_factory=list)
    #: the rows prepared before, by their plans' key (:func:`~fusionlab.pipeline.planning.plans_key`):
    #: a row with the same plans runs the same kernels, so it shares that row's variant
    shared: dict[Any, _Ready] = field(default_factory=dict)
    #: the draws each fused run repeats so that both sides draw (``None``: no draws to repeat)
    redraw: Callable[[], None] | None = None
    #: batch index to blocks chosen elsewhere, planned as given (``None``: the row's search)
    partitions: Mapping[int, Sequence[Sequence[int]]] | None = None

    @property
    def algorithm(self) -> str:
        """The row's algorithm."""
        return self.config.algorithm

    @property
    def model(self) -> Any:
        """The row's cost model (a name or a model object)."""
        return self.config.cost_model

    @property
    def name(self) -> str:
        """The cost model's name."""
        return str(getattr(self.model, "name", self.model))

    def prepare(self, figures: Any, progress: Callable[[str, int, int], None] | None,
                label: str, done: int, total: int) -> "Record | _Ready":
        """The row's plans, kernels and warm-up run within the compile budget: a
        :class:`_Ready` for the rounds, or the record of a row that will not be timed."""
        batches, inputs, externals = self._batches()
        name = self.name
        if self.budget.expired():  # not even its WSP graph: that alone takes seconds on a big batch
            return _not_timed(name, self.algorithm, f"not timed: compile budget{self._of()} spent before this row")
        est = self.runs.estimate or 0.0
        if not self.runs.fits(est):  # not even one run: its kernels need not be compiled
            return _not_timed(name, self.algorithm, f"not timed: {self.runs.described()} spent before this row "
                              f"(one run takes about {est:.2g} s)")
        t0 = time.perf_counter()  # the row's use of the compile budget starts
        try:
            results, plans_ = self._plans(batches)
        except BudgetExceeded:
            self.spent[0] += time.perf_counter() - t0
            return _not_timed(name, self.algorithm, f"not timed: compile budget{self._of()} spent partitioning "
                              "and planning its kernels")
        cost = sum(r.cost for r in results)
        key = plans_key(plans_)
        if key in self.shared:
            earlier = self.shared[key]
            self.spent[0] += time.perf_counter() - t0
            return replace(earlier, name=name, algorithm=self.algorithm, cost=cost, same_as=earlier.label)
        specs = {bp.compiled.key: bp.compiled for p in plans_ for bp in p.blocks if bp.compiled is not None}

        def on_kernel(compiled: int, seconds: float) -> None:
            if progress is not None:
                progress(f"{label}: {self._ready(specs)} of {len(specs)} kernels ready "
                         f"({self.spent[0] + time.perf_counter() - t0:.0f} s of the compile budget{self._of()})", done, total)

        watch = CompileWatch(self.budget, on_kernel)
        if progress is not None:
            self.on_load = lambda k, of: progress(f"{label}: {k} of {of} kernels loaded "
                                                  f"({self.spent[0] + time.perf_counter() - t0:.0f} s of the "
                                                  f"compile budget{self._of()})", done, total)
        blocks = sum(len(p.blocks) for p in plans_)
        t = time.perf_counter()
        try:
            with watch.watching(), warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                self._load(specs, watch)
                fused = Driver(plans_, externals, self.cache, inputs, mode=self.driver)
                warm_start = self.runs.clock()  # the warm-up, on the runs' clock
                synced = fused()
                first = self.runs.clock() - warm_start
                self.spent[0] += time.perf_counter() - t0
        except CompileBudgetSpent as exc:
            self.spent[0] += time.perf_counter() - t0
            why = f"not timed: compile budget{self._of()} spent after {self._ready(specs)} of {len(specs)} kernels"
            why += f": {exc.why}" if exc.why else ""
            return _not_timed(name, self.algorithm, why, blocks, len(specs), cost, time.perf_counter() - t)
        except KeyboardInterrupt:
            self.interrupted = (f"not timed: interrupted (Kernel -> Interrupt) after {self._ready(specs)} of "
                                f"{len(specs)} kernels")
            raise
        reason = fused.fallback.describe() if fused.fallback is not None else fused.reason
        res = RunResult(_values(self.target, synced), plans_, first,
                        driver=fused.runs + (f": {reason}" if reason else ""), ran=fused.kind, fallback=fused.fallback)
        notes = [str(w.message) for w in caught] + [c.describe() for c in self.cut]
        if any(getattr(r, "budget_cut", False) for r in results):
            notes.append("the partition as it was shown: a search the budget cut (its best so far), not searched again")
        redraw = self.redraw

        def timed() -> Any:
            if redraw is not None:   # the same draws as NumPy's side (Draws.BOTH)
                redraw()
            return fused()

        ready = _Ready(name, self.algorithm, cost, sum(len(p.blocks) for p in res._distinct()), plans_, fused,
                       # one run's estimate: the warm-up compiled, so it bounds a run from above;
                       # NumPy's run is the likelier figure until the first round measures it
                       Variant(f"{self.algorithm} / {name}", timed, min(first, self.runs.numpy or first), warm_up=first),
                       None, dict(res.values),  # type: ignore[arg-type]
                       res, self._predicted(batches, plans_, figures, externals), notes, first)
        ready.first = ready
        self.shared[key] = ready
        return ready

    def _batches(self) -> tuple[list[Program], dict[str, np.ndarray], Externals]:
        """The batches as this row partitions them, with their inputs: the pipeline's
        preparing passes (:func:`fusionlab.pipeline.prepare`), kept in the caches, so every row
        and click gets the same objects (plans and graphs are kept by the batch's identity)."""
        # rerolling and both dead-writes passes get what the explorer gives rerolling, cut to
        # the compile budget: past it the rest runs as captured (a 100,000-iteration
        # `x += 1.0` loop took 3.5-4.3 s to reroll with no budget)
        prepared = prepare_kept(self.target, self.config, self.caches, self.budget.child(REROLL_SECONDS))
        self.cut = list(prepared.cut)
        return list(prepared.programs), dict(prepared.inputs), prepared.externals

    def _plans(self, batches: Sequence[Program]) -> tuple[list[Any], list[Plan]]:
        """Each batch's partition and kernel plan, within the budget (a partition it cuts
        is its best so far; the kernels then do not fit either): the pipeline's planning
        passes (:func:`fusionlab.pipeline.plans`), as ``run`` runs them."""
        planned = plans(batches, self.config, self.caches, self.budget, partitions=self.partitions)
        return [r for r in planned.results if r is not None], list(planned.plans)

    def _predicted(self, batches: Sequence[Program], plans_: Sequence[Plan], figures: Any,
                   externals: Externals) -> float | None:
        """What the ``time`` model predicts for a run (as
        :func:`~fusionlab.costs.timemodel.predict_seconds`), on the WSP graphs kept with the plans:
        building them again took as long as the partitioning (26.5 s for LU at n = 100 on a
        loaded machine). ``None`` when a big batch's graph is not kept (a merge-cache hit)."""
        blocks = [[list(bp.instructions) for bp in p.blocks] for p in plans_]
        graphs = [self.caches.graphs.get(b) for b in batches]
        if all(isinstance(g, WSPGraph) and g.program is b for g, b in zip(graphs, batches)):
            model = TimeModel(figures, self.config.min_size, opaque_seconds=externals.seconds,
                              by_blocks=runs_block_by_block(list(batches)))
            launch = model.figures.launch
            total = sum(model.evaluator(g).cost(bl) for g, bl in zip(graphs, blocks))
            return total + launch.get("run", 0.0) + launch.get("batch", 0.0) * (len(batches) - 1)
        if all(len(b) <= 2_000 for b in batches):  # graphs of a second or less: built again
            return predict_seconds(batches, blocks, figures, self.config.min_size, opaque_seconds=externals.seconds)
        return None

    def _of(self) -> str:
        s = self.total_seconds
        return "" if s is None or not np.isfinite(s) else f" of {s:g} s"

    def _ready(self, specs: Mapping[str, KernelSource]) -> int:
        """Kernels of the row compiled or loaded from Numba's disk cache (callable at once)."""
        return sum(1 for k in specs if k in self.cache.kernels and getattr(self.cache.kernels[k], "overloads", True))

    def _load(self, specs: Mapping[str, KernelSource], watch: CompileWatch) -> None:
        """Import the row's kernel modules one by one, within the budget: thousands of
        kernels (an unrolled loop) take seconds just to write and import."""
        for k, (key, spec) in enumerate(specs.items()):
            if key not in self.cache.kernels:
                watch.before_compile(OUR_MODULES[0])
                self.cache.get(spec)
                if self.on_load is not None and k % 100 == 99:
                    self.on_load(k + 1, len(specs))


def _spread(times: Sequence[float], busy_cores: float) -> dict[str, Any]:
    """A row's quartiles, spread, samples and busy flag (half a core or more used by others)."""
    med = statistics.median(times)
    q1, _, q3 = statistics.quantiles(times, n=4, method="inclusive") if len(times) > 1 else (med, med, med)
    busy = busy_cores >= 0.5
    notes = [f"other processes used {busy_cores:.1f} cores while this comparison was timed"] if busy else []
    return {"q1_seconds": q1, "q3_seconds": q3, "spread": (q3 - q1) / med if med else 0.0, "samples": list(times),
            "busy": busy, "warnings": notes}


def format_records(records: Sequence[Record]) -> str:
    """A text table of comparison records: each speed-up with its interval; a row with the
    plans of an earlier row (the same kernels, timed once), rows not different from each
    other, and how the rounds ran are said under the table.

    >>> nan = float("nan")
    >>> a = Record("bohrium", "greedy", 1, 1, 4.0, 0.5, 0.01, 0.009, 2.0, 0.0, speedup_low=1.8, speedup_high=2.2)
    >>> b = Record("max_contract", "greedy", 1, 1, 0.0, 0.5, 0.01, 0.009, 2.0, 0.0, same_kernels_as="greedy / bohrium")
    >>> print(format_records([a, b]).splitlines()[-1])
    * greedy / max_contract: the same kernels as greedy / bohrium, timed once (its times are that row's)
    """
    head = f"{'cost model':<14}{'algorithm':<12}{'blocks':>7}{'kernels':>8}{'cost':>14}{'compile s':>10}" \
           f"{'median s':>10}{'min s':>10}{'speed-up':>9}{'95% interval':>16}{'max err':>10}"
    lines = [head, "-" * len(head)]
    notes = []
    for r in records:
        cost = "" if r.cost is None else f"{r.cost:g}"
        err = "" if r.max_abs_error is None else f"{r.max_abs_error:.1e}"
        if r.not_comparable:
            speed, interval = "   n/c", ""
        elif math.isnan(r.speedup):
            speed, interval = "     —", ""
        else:
            speed = f"{r.speedup:8.2f}x"
            interval = f"{r.speedup_low:.2f}-{r.speedup_high:.2f}x" if not math.isnan(r.speedup_low) else ""
        median = "—" if math.isnan(r.median_seconds) else f"{r.median_seconds:.4f}"
        low = "—" if math.isnan(r.min_seconds) else f"{r.min_seconds:.4f}"
        mine = r.same_kernels_as or r.label
        apart = [o for o in r.not_different if o not in (mine,) and not any(
            x.label == o and (x.same_kernels_as or x.label) == mine for x in records)]
        marks = (" *" if r.same_kernels_as else "") + (" ≈" if apart else "")
        lines.append(f"{r.cost_model:<14}{r.algorithm:<12}{r.blocks:>7}{r.kernels:>8}{cost:>14}"
                     f"{r.compile_seconds:>10.3f}{median:>10}{low:>10}{speed:>9}{interval:>16}{err:>10}{marks}")
        if r.same_kernels_as:
            notes.append(f"* {r.label}: the same kernels as {r.same_kernels_as}, timed once (its times are that row's)")
    owner = {r.label: r.same_kernels_as or r.label for r in records}   # rows sharing one timing
    pairs = []
    for r in records:
        for other in r.not_different:
            if owner.get(other, other) != owner[r.label] and (other, r.label) not in pairs:
                pairs.append((r.label, other))
    if pairs:
        notes.append("≈ not different (their speed-up intervals overlap): "
                     + "; ".join(f"{a} and {'NumPy' if b == 'numpy' else b}" for a, b in pairs))
    comparable = next((r.not_comparable for r in records if r.not_comparable), "")
    if comparable:
        notes.append(f"n/c {comparable}")
    for r in records:
        if r.not_timed:
            notes.append(f"{r.label}: {r.not_timed}")
    protocol = getattr(records, "protocol", None)
    if protocol:
        notes.append(f"{protocol['rounds']} interleaved rounds (order rotated each round) after "
                     f"{protocol['warmup_rounds']} warm-up round(s); {protocol['draws_note']}; "
                     f"{protocol['allocator'] + '; ' if protocol.get('allocator') else ''}speed-up interval: "
                     f"{protocol['interval']}")
    # the same-kernels footnote stays the last line (tests and readers look for it there)
    same = [n for n in notes if n.startswith("* ")]
    rest = [n for n in notes if not n.startswith("* ")]
    return "\n".join(lines + rest + same)
