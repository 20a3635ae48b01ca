"""``run`` a captured program (or a bytecode program) with Numba kernels, and ``compare``
partitions of several algorithms and cost models against NumPy, timed in one process."""

from __future__ import annotations

import contextlib
import io
import statistics
import time
import warnings
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from fusionlab.support.budget import UNLIMITED, Budget, BudgetExceeded, Interrupt
from fusionlab.ir.bytecode import Program
from fusionlab.backend.numba.codegen import KernelSource
from fusionlab.passes.reroll import REROLL_SECONDS
from fusionlab.passes.rewrites import Rewrite
from fusionlab.pipeline.preparing import REROLL_PASSES
from fusionlab.costs.timemodel import TimeModel, load_figures, predict_seconds, runs_block_by_block
from fusionlab.analysis.wsp import WSPGraph
from fusionlab.pipeline.compile_watch import OUR_MODULES, CompileBudgetSpent, CompileWatch
from fusionlab.runtime.check import CheckReport, Mismatch, check_namespace, plain_namespace, reduction_terms
from fusionlab.runtime.errors import propagate
from fusionlab.backend.numba.driver import Driver, Runs
from fusionlab.backend.numba.guards import SizeFallback
from fusionlab.backend.numba.plan import DEFAULT_MIN_SIZE, BlockPlan, KernelCache, NumpyRuns, Plan
from fusionlab.runtime.reference import Externals, Storage, run_reference
from fusionlab.backend.numba.threads import cpu_snapshot, others_busy
from fusionlab.pipeline.timed_runs import CHECK_RUNS, LONG_RUN_SECONDS, RunBudget
from fusionlab.pipeline.planning import plans_key
from fusionlab.pipeline import (
    PipelineCaches, PipelineConfig, build, plans, prepare, prepare_kept, target_parts,
)

__all__ = ["run", "compare", "RunResult", "Record", "format_records", "check_against_numpy"]


@dataclass
class RunResult:
    """Values computed by the fused kernels, and how each block ran."""

    values: dict[str, Any]
    plans: list[Plan]
    seconds: float
    max_abs_error: float | None = None
    #: what called the kernels: "python driver", "compiled driver", or "block by block: why"
    driver: str = ""
    #: the same as a type (None: no run's driver was built)
    ran: Runs | None = None
    #: seconds of the ``repeat`` runs after the first (which compiles)
    times: list[float] = field(default_factory=list)
    #: the Numba threads of the last run and why ("2 threads: 2 of 2 cores free"): the
    #: count is decided per run from the cores free then (:mod:`fusionlab.backend.numba.threads`)
    threads: str = ""
    #: ``check=True``: the values against plain NumPy (the captured source run plainly;
    #: for a bytecode program, the reference executor) — see :mod:`fusionlab.runtime.check`
    check: CheckReport | None = None
    #: what was rewritten before partitioning, one record per instruction (the dead-writes
    #: passes, :mod:`fusionlab.passes.deadwrites`) and per array freed early
    #: (:mod:`fusionlab.passes.deadbases`); ``describe()`` is the line shown ("batch 1:
    #: instruction 16 (COPY new, u) removed: ..."), ``kind`` what happened
    rewrites: list[Rewrite] = field(default_factory=list)
    #: what the rerolling pass did (:mod:`fusionlab.passes.reroll`), as records; empty when off
    rerolled: list[Rewrite] = field(default_factory=list)
    #: where the run's budget cut rerolling or the dead-writes pass (the rest ran as
    #: captured), records of kind ``BUDGET_CUT``; empty when neither was cut
    cut: list[Rewrite] = field(default_factory=list)
    #: set when a size capture recorded did not hold in the fused run (a filter's count, an
    #: index's range): the run was done again as NumPy, and its values are NumPy's
    #: (:mod:`fusionlab.backend.numba.guards`); no kernel's result is in :attr:`values` then
    fallback: SizeFallback | None = None

    def _kernel(self, b: BlockPlan) -> KernelSource | None:
        if self.fallback is not None:
            return None
        # a driver calls the serial kernel of a block that block by block runs with NumPy
        return b.compiled if self.ran is not None and self.ran.driven else b.kernel

    @property
    def kernels(self) -> int:
        """Compiled blocks, over distinct batches."""
        return sum(1 for p in self._distinct() for b in p.blocks if self._kernel(b) is not None)

    @property
    def fallbacks(self) -> list[str]:
        """Blocks NumPy ran, and why (library kernels aside: see :attr:`library_kernels`)."""
        return self._numpy_blocks(library=False)

    @property
    def split(self) -> list[str]:
        """Blocks of the partitions run as several kernels, and why
        (:func:`~fusionlab.backend.numba.plan.compiler_sized`)."""
        return [f"batch {k + 1}: {n}" for k, p in enumerate(self.plans) for n in p.notes]

    @property
    def library_kernels(self) -> list[str]:
        """Blocks that are one contraction, run as NumPy's own call (BLAS for ``@``): the
        fastest kernel there is for them, not a fallback (docs/backend.md, "Contractions")."""
        return self._numpy_blocks(library=True)

    def _numpy_blocks(self, library: bool) -> list[str]:
        if self.fallback is not None:
            return [] if library else [f"every block: {self.fallback.describe()}"]
        out = []
        for p in self._distinct():
            for b in p.blocks:
                if self._kernel(b) is None and b.numpy is not NumpyRuns.NOTHING_TO_COMPUTE \
                        and (b.numpy is NumpyRuns.LIBRARY_CALL) == library:
                    out.append(f"block {b.numbered}: {b.reason}")
        return out

    def _distinct(self) -> list[Plan]:
        seen, out = set(), []
        for p in self.plans:
            key = (p.program.signature(), tuple(b.instructions for b in p.blocks))
            if key not in seen:
                seen.add(key)
                out.append(p)
        return out


def _values(target: Any, synced: dict[str, np.ndarray]) -> dict[str, Any]:
    from fusionlab.capture import Capture

    return target.values_from(synced) if isinstance(target, Capture) else synced


def run_config(algorithm: str, cost_model: Any, min_size: int, reroll: bool) -> PipelineConfig:
    """The pipeline's configuration of :func:`run` and of :func:`compare`'s rows: every pass,
    rerolling (and the dead-writes pass before it) off with ``reroll=False``."""
    config = PipelineConfig(algorithm, cost_model, min_size)
    return config if reroll else config.without(*REROLL_PASSES)


def run(
    target: Any,
    algorithm: str = "greedy",
    cost_model: Any = "bohrium",
    *,
    partitions: Mapping[int, Any] | None = None,
    check: bool = False,
    cache: KernelCache | None = None,
    min_size: int = DEFAULT_MIN_SIZE,
    inputs: Mapping[str, np.ndarray] | None = None,
    driver: str = "python",
    repeat: int = 0,
    plans: Sequence[Plan] | None = None,
    reroll: bool | None = None,
    budget: Budget | None = None,
    config: PipelineConfig | None = None,
) -> RunResult:
    """Execute a :class:`~fusionlab.capture.Capture` (every batch) or a program, with the
    partition of ``algorithm`` under ``cost_model`` (or ``partitions``: batch index to
    blocks), one Numba kernel per block.

    The kernels are called from the run's driver (:mod:`fusionlab.backend.numba.driver`):
    ``driver="python"`` runs it as Python, ``"numba"`` compiles it too, ``"blocks"`` runs
    block by block; ``RunResult.driver`` says what ran (and why not a driver, when none
    could be built), ``RunResult.threads`` how many Numba threads the last run used and why. ``check=True`` also runs the reference executor (``max_abs_error``: the
    largest difference from it) and compares the values with plain NumPy, the captured
    source run plainly (``RunResult.check``, :mod:`fusionlab.runtime.check`). ``repeat=N`` runs N more times after the first (which compiles) and
    keeps their seconds in ``RunResult.times``. ``reroll``: rewrite the runs of an unrolled
    Python loop into 2-D instructions first (:mod:`fusionlab.passes.reroll`); by default when the
    partitions are fusionlab's own (given ``partitions`` number the batches' instructions as
    given, unless ``reroll=True`` says they number the rerolled ones). Without ``partitions``,
    each batch's dead parts of writes are then dropped before it is partitioned
    (:mod:`fusionlab.passes.deadwrites`; ``RunResult.rewrites`` says what changed); ``plans``: plans
    made before (by ``compare``'s rows: their programs may be rewritten batches, rerolled
    ones too unless ``reroll=False``), run as they are.

    ``config``: the pipeline's configuration (:mod:`fusionlab.pipeline`), in place of
    ``algorithm``, ``cost_model``, ``min_size`` and ``reroll`` (:func:`run_config` makes it
    from them otherwise).

    ``budget`` (:class:`~fusionlab.support.budget.Budget`; ``None``: no limit) bounds rerolling and the
    dead-writes passes, as in the explorer: past it, what was rerolled is kept and the rest runs
    as captured (the values are the same), and ``RunResult.cut`` says where it stopped.

    Examples
    --------
    >>> from fusionlab.capture import capture
    >>> cap = capture("import numpy as np\\nx = np.arange(8.0)\\ny = np.sqrt(x) * 2 + x")
    >>> r = run(cap, "greedy", check=True, min_size=0)
    >>> r.values["y"][:3], r.max_abs_error, r.kernels, r.driver
    (array([0.        , 3.        , 4.82842712]), 0.0, 1, 'python driver')
    >>> r.threads.endswith("cores free")   # e.g. "2 threads: 2 of 2 cores free"
    True
    """
    reroll = partitions is None if reroll is None else reroll
    budget = UNLIMITED if budget is None else budget
    cache = cache or KernelCache()
    config = config if config is not None else run_config(algorithm, cost_model, min_size, reroll)
    if plans is None:
        built = build(target, config, prepare_budget=budget, partitions=partitions, inputs=inputs)
        prepared, plans = built.prepared, list(built.plans)
    else:   # planned before (a comparison's row): only the inputs the preparing passes make
        prepared = prepare(target, config, budget, inputs)
    batches, externals = list(prepared.captured), prepared.externals
    runner = Driver(plans, externals, cache, dict(prepared.inputs), mode=driver)
    t = time.perf_counter()
    synced = runner()
    seconds = time.perf_counter() - t
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        runner()
        times.append(time.perf_counter() - t)
    values = _values(target, synced)
    choice = runner.choice
    reason = runner.fallback.describe() if runner.fallback is not None else runner.reason
    result = RunResult(values, plans, seconds, driver=runner.runs + (f": {reason}" if reason else ""), ran=runner.kind,
                       times=times, threads="" if choice is None else
                       f"{choice.threads} thread{'s' if choice.threads != 1 else ''}: {choice.reason}",
                       rewrites=list(prepared.rewrites), rerolled=list(prepared.rerolled), cut=list(prepared.cut),
                       fallback=runner.fallback)
    if check:   # against the batches as captured: an oracle for the rerolling too
        # the check's own replay, with the error model's bounds beside it (runtime/errors.py);
        # the user's floating-point warnings (or their silence under np.errstate) are the
        # plain run's, not this one's
        with np.errstate(all="ignore"):
            ref, ref_bounds = propagate(batches, externals, {**target_parts(target)[1], **(inputs or {})})
        want = _values(target, ref)
        result.max_abs_error = max((_error(values[k], want[k]) for k in want), default=0.0)
        result.check = check_against_numpy(target, values, want, _values(target, ref_bounds))
    return result


def check_against_numpy(target: Any, values: Mapping[str, Any], replayed: Mapping[str, Any],
                        bounds: Mapping[str, Any] | None = None) -> CheckReport:
    """``values`` (a fused run's) against plain NumPy: the captured source run plainly when
    there is one, else the reference executor's ``replayed`` values; each value within the
    error model's ``bounds`` (by label: :mod:`fusionlab.runtime.errors`), or without them
    within the tolerance of the program's longest reduction
    (:func:`fusionlab.runtime.check.tolerance`)."""
    from fusionlab.capture import Capture

    batches, _, _ = target_parts(target)
    terms = reduction_terms(batches)
    # a capture stopped at its budget: the program is the recorded part, not the source
    if isinstance(target, Capture) and target.source and target.stopped is None:
        try:
            plain = plain_namespace(target.source, draws=target.draws)
        except Exception as exc:  # the user's program: any exception
            return CheckReport(mismatches=[Mismatch("<program>", f"fails under plain NumPy: "
                                                    f"{type(exc).__name__}: {exc}")])
        return check_namespace(values, plain, terms=terms, bounds=bounds)
    return check_namespace(values, replayed, terms=terms, bounds=bounds)


def _error(a: Any, b: Any) -> float:
    x, y = np.asarray(a), np.asarray(b)
    if x.shape != y.shape:
        return float("inf")
    if x.size == 0:
        return 0.0
    if x.dtype.kind not in "fciub" or y.dtype.kind not in "fciub":
        return 0.0 if np.array_equal(x, y) else float("inf")
    with np.errstate(invalid="ignore"):
        d = np.abs(x.astype(np.complex128) - y.astype(np.complex128))
    both_nan = np.isnan(x.astype(np.complex128)) & np.isnan(y.astype(np.complex128))
    # equal infinities subtract to NaN: they do not differ
    d = np.where(both_nan | (x == y), 0.0, d)
    return float(np.max(d)) if d.size else 0.0


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
    #: every timed run's seconds, in order
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
    #: the earlier row whose plans are this row's ("greedy × bohrium"): the same kernels in
    #: the same order, timed once; its times are that row's. Empty when timed on its own
    same_kernels_as: str = ""

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


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
) -> list[Record]:
    """Time the fused partitions of every algorithm × cost model against NumPy eager.

    NumPy eager is the first record: ``baseline`` when given (the Jupyter magic runs the
    cell on a copy of the user's namespace), else the captured source run plainly (for a
    bytecode program, the reference executor). Times exclude compilation (a warm-up run
    compiles every kernel and is reported as ``compile_seconds``). ``progress(label, done,
    total)`` is called before each row is measured, after each kernel compiled (``done``
    still the rows done; the label counts the kernels) and once at the end. Each partition runs
    as :func:`run` runs it with ``driver`` (a compiled driver's compilation counts in
    ``compile_seconds``). Each fused record carries ``predicted_seconds``: what the ``time``
    cost model predicts for that run, from this machine's calibration (``fusionlab
    calibrate``; the default figures without one), to set beside the measured median.

    ``compile_seconds`` bounds the preparation of the rows over the whole comparison:
    partitioning, planning, loading and compiling kernels (checked between kernels,
    :mod:`fusionlab.pipeline.compile_watch`) and the warm-up run; NumPy's runs, the timed
    runs and the check against plain NumPy do not count (they are a few runs of the
    cell). A row whose kernels do not fit is not timed and says so in
    ``Record.not_timed`` ("compile budget of 30 s spent after 12 of 40 kernels"); later
    rows whose kernels are all ready are still timed. ``interrupt``: an armed
    :class:`~fusionlab.support.budget.Interrupt` checked between kernels. ``keep_on_interrupt``:
    Kernel -> Interrupt (``KeyboardInterrupt``) stops the comparison and returns the rows
    timed, the others marked interrupted (else it propagates, as from any command).
    ``reroll``: the fused rows run the batches rerolled (:func:`run`'s ``reroll``). Each row
    runs the pipeline (:mod:`fusionlab.pipeline`) with :func:`run`'s configuration, so a row
    times the kernels ``run`` executes. ``caches``: the pipeline's caches (the explorer keeps
    them between clicks: partitions, WSP graphs, plans, so a second click goes on where the
    compile budget stopped the first), filled in. ``options``: per algorithm, the options
    its search takes (``{"optimal": {"max_nodes": 500}}``; the explorer's own limits), in
    each row's configuration as ``run`` takes them. ``config``: the rows' configuration
    but their algorithm, cost model and options (its passes and smallest parallel block;
    the explorer's, which may explore the batches as captured), in place of ``min_size``
    and ``reroll``.

    ``run_seconds`` bounds the timed runs and the check (``None``: no limit; a
    :class:`~fusionlab.support.budget.Budget` brings its own clock): each row takes as many of the
    ``repeat`` runs as fit in its share of what is left, and says when it took fewer; a row
    none of whose runs fit is not timed (:mod:`fusionlab.pipeline.timed_runs`). The check
    against plain NumPy (one plain run and the reference replay) is made once and compared
    with each row's last run; when it does not fit, the rows say ``not checked``.
    """
    batches, inputs, externals = target_parts(target)
    cache = cache or KernelCache()
    spent = [0.0]  # seconds of the compile budget used by the rows so far
    rows = [(model, algorithm) for model in cost_models for algorithm in algorithms]
    total = 1 + len(rows)
    runs = RunBudget(run_seconds, repeat, interrupt)
    checker = _Check(target, runs)
    caches = caches if caches is not None else PipelineCaches()
    timed: dict[Any, tuple[str, Record]] = {}   # the rows timed, by their plans: the same plans timed once
    template = config if config is not None else run_config("greedy", "bohrium", min_size, reroll)
    if progress is not None:
        progress("NumPy eager", 0, total)
    records: list[Record] = []
    try:
        records.append(_numpy_record(target, baseline, batches, inputs, externals, runs, total))
        runs.estimate = runs.numpy = records[0].min_seconds
        figures = load_figures()
        for k, (model, algorithm) in enumerate(rows):
            label = f"{algorithm} / {getattr(model, 'name', model)}"
            if progress is not None:
                progress(label, len(records), total)
            left = None if compile_seconds is None else max(compile_seconds - spent[0], 0.0)
            row_config = replace(template, algorithm=algorithm, cost_model=model,
                                 options=tuple(sorted((options or {}).get(algorithm, {}).items())))
            row = _Row(target, row_config, cache,
                       Budget(left, interrupt=interrupt), driver, compile_seconds, spent, runs=runs,
                       checker=checker, rows_left=len(rows) - k, caches=caches, timed=timed)
            try:
                rec = row.record(repeat, figures, progress, label, len(records), total)
            except KeyboardInterrupt:
                if not keep_on_interrupt:
                    raise
                records.append(_not_timed(row.name, algorithm, row.interrupted))
                raise
            if not rec.not_timed:  # the speed-up over NumPy eager's median
                med = rec.median_seconds
                rec.speedup = records[0].median_seconds / med if med else float("inf")
            records.append(rec)
    except KeyboardInterrupt:
        if not keep_on_interrupt:
            raise
        if not records:
            records.append(_not_timed("numpy", "eager", "not timed: interrupted (Kernel -> Interrupt)"))
        for model, algorithm in rows[len(records) - 1:]:
            records.append(_not_timed(getattr(model, "name", model), algorithm,
                                      "not timed: interrupted (Kernel -> Interrupt) before this row"))
    if progress is not None:
        progress("done", total, total)
    return records


def _numpy_record(target: Any, baseline: Callable[[], Any] | None, batches: Sequence[Program],
                  inputs: Mapping[str, np.ndarray], externals: Externals, runs: RunBudget, rows: int) -> Record:
    """NumPy eager's row: the baseline run once to warm up, then as many of the runs asked
    for as fit its share of ``runs`` (of ``rows`` rows); a long warm-up is one of them when
    fewer fit."""
    from fusionlab.capture import Capture

    if baseline is None and isinstance(target, Capture) and target.source and target.stopped is None:
        source = target.source

        def baseline() -> None:
            with contextlib.redirect_stdout(io.StringIO()):
                exec(compile(source, "<numpy>", "exec"), {"__name__": "__main__"})
    elif baseline is None:
        def baseline() -> None:
            st = Storage(inputs)
            for b in batches:
                run_reference(b, externals=externals, storage=st)

    before = cpu_snapshot()
    t = runs.clock()
    baseline()
    warm = runs.clock() - t
    runs.spend(warm)
    fit = runs.count(warm, rows)
    counted = fit < runs.repeat and (warm >= LONG_RUN_SECONDS or fit == 0)
    if counted:  # a long cell's warm-up is one of its samples when fewer runs fit than asked
        base, _, note = runs.timed(baseline, min(runs.count(warm, rows, at_least_one=False), runs.repeat - 1))
        base = [warm] + base
    else:
        base, _, note = runs.timed(baseline, fit)
    extra = _spread(base, others_busy(before, cpu_snapshot()))
    extra["warnings"] += [note or runs.fewer(len(base), max(base), warm_up=counted)] \
        if len(base) < runs.repeat else []
    return Record("numpy", "eager", 0, 0, None, 0.0, statistics.median(base), min(base), 1.0, None, **extra)


def _timed(fn: Callable[[], Any], runs: RunBudget, count: int) -> tuple[list[float], float, Any, str]:
    """The seconds of up to ``count`` runs within ``runs``, the cores other processes used
    meanwhile, the last run's value, and why fewer ran."""
    before = cpu_snapshot()
    times, last, note = runs.timed(fn, count)
    return times, others_busy(before, cpu_snapshot()), last, note


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
    budget, then its timed runs and its check against plain NumPy."""

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
    #: the comparison's run budget, its check, and the rows still to time (this one included)
    runs: RunBudget = field(default_factory=lambda: RunBudget(None, 1))
    checker: Any = None
    rows_left: int = 1
    #: the pipeline's caches: prepared batches, partitions, WSP graphs, plans (kept between clicks)
    caches: PipelineCaches = field(default_factory=PipelineCaches)
    #: where the budget cut rerolling or the dead-writes passes of the batches (each row's
    #: warnings say so: the rest ran as captured)
    cut: list[Rewrite] = field(default_factory=list)
    #: the rows timed before, by their plans' key (:func:`~fusionlab.pipeline.planning.plans_key`):
    #: a row with the same plans runs the same kernels, so it takes that row's times (two
    #: timings of one plan differ only by the machine: the first row timed was the slow one)
    timed: dict[Any, tuple[str, Record]] = field(default_factory=dict)

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

    def record(self, repeat: int, figures: Any, progress: Callable[[str, int, int], None] | None,
               label: str, done: int, total: int) -> Record:
        batches, inputs, externals = self._batches()
        name = getattr(self.model, "name", self.model)
        if self.budget.expired():  # not even its WSP graph: that alone takes seconds on a big batch
            return _not_timed(name, self.algorithm, f"not timed: compile budget{self._of()} spent before this row")
        est = self.runs.estimate or 0.0
        if not self.runs.fits(est):  # not even one run: its kernels need not be compiled
            return _not_timed(name, self.algorithm, f"not timed: {self.runs.described()} spent before this row "
                              f"(one run takes about {est:.2g} s)")
        t0 = time.perf_counter()  # the row's use of the compile budget starts
        try:
            results, plans = self._plans(batches)
        except BudgetExceeded:
            self.spent[0] += time.perf_counter() - t0
            return _not_timed(name, self.algorithm, f"not timed: compile budget{self._of()} spent partitioning "
                              "and planning its kernels")
        cost = sum(r.cost for r in results)
        key = plans_key(plans)
        if key in self.timed:
            first_label, earlier = self.timed[key]
            self.spent[0] += time.perf_counter() - t0
            return replace(earlier, cost_model=name, algorithm=self.algorithm, cost=cost, same_kernels_as=first_label,
                           warnings=[f"same kernels as {first_label}: timed once"] + list(earlier.warnings),
                           samples=list(earlier.samples), fallbacks=list(earlier.fallbacks))
        specs = {bp.compiled.key: bp.compiled for p in plans for bp in p.blocks if bp.compiled is not None}

        def on_kernel(compiled: int, seconds: float) -> None:
            if progress is not None:
                progress(f"{label}: {self._ready(specs)} of {len(specs)} kernels ready "
                         f"({self.spent[0] + time.perf_counter() - t0:.0f} s of the compile budget{self._of()})", done, total)

        watch = CompileWatch(self.budget, on_kernel)
        if progress is not None:
            self.on_load = lambda k, of: progress(f"{label}: {k} of {of} kernels loaded "
                                                  f"({self.spent[0] + time.perf_counter() - t0:.0f} s of the "
                                                  f"compile budget{self._of()})", done, total)
        t = time.perf_counter()
        try:
            with watch.watching(), warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                self._load(specs, watch)
                fused = Driver(plans, externals, self.cache, inputs, mode=self.driver)
                warm_start = self.runs.clock()  # the warm-up, on the runs' clock
                fused()
                first = self.runs.clock() - warm_start
                self.spent[0] += time.perf_counter() - t0
                timed = self._runs(fused, plans, first, est)
                if isinstance(timed, str):
                    return _not_timed(name, self.algorithm, timed, sum(len(p.blocks) for p in plans), len(specs), cost,
                                      first)
        except CompileBudgetSpent as exc:
            self.spent[0] += time.perf_counter() - t0
            why = f"not timed: compile budget{self._of()} spent after {self._ready(specs)} of {len(specs)} kernels"
            why += f": {exc.why}" if exc.why else ""
            return _not_timed(name, self.algorithm, why, sum(len(p.blocks) for p in plans), len(specs), cost,
                              time.perf_counter() - t)
        except KeyboardInterrupt:
            self.interrupted = (f"not timed: interrupted (Kernel -> Interrupt) after {self._ready(specs)} of "
                                f"{len(specs)} kernels")
            raise
        times, busy, note, res, (error, check, not_checked) = timed
        med = statistics.median(times)
        self.runs.estimate = med
        extra = _spread(times, busy)
        extra["threads"] = fused.choice.threads if fused.choice is not None else 0
        extra["predicted_seconds"] = self._predicted(batches, plans, figures, externals)
        extra["warnings"] += [str(w.message) for w in caught]
        extra["warnings"] += [w for w in (note or self.runs.fewer(len(times), med), not_checked) if w]
        extra["warnings"] += [c.describe() for c in self.cut]
        if check is not None and not check.ok:
            extra["warnings"] += [f"differs from plain NumPy: {m}" for m in check.mismatches[:5]]
        rec = Record(name, self.algorithm, sum(len(p.blocks) for p in res._distinct()), res.kernels, cost,
                     max(first - med, 0.0), med, min(times), float("nan"), error, res.fallbacks, **extra,
                     not_checked=not_checked)
        self.timed[key] = (f"{self.algorithm} / {name}", rec)
        return rec

    def _runs(self, fused: Driver, plans: list[Plan], first: float, est: float) -> Any:
        """The row's timed runs within the run budget and its check: ``(times, busy cores,
        why fewer, RunResult, (error, check, why not checked))``, or why not timed."""
        # the last row's runs estimate one run; the warm-up (which compiled) bounds it
        one = min(first, est) if est > 0 else first
        count = self.runs.count(one, self.rows_left)
        if count == 0:
            return f"not timed: {self.runs.described()} spent (one run takes about {one:.2g} s; its kernels are ready)"
        times, busy, synced, note = _timed(fused, self.runs, count)
        reason = fused.fallback.describe() if fused.fallback is not None else fused.reason
        res = RunResult(_values(self.target, synced), plans, first,
                        driver=fused.runs + (f": {reason}" if reason else ""), ran=fused.kind,
                        fallback=fused.fallback)
        checked = self.checker(res.values) if self.checker is not None else (None, None, "")
        return times, busy, note, res, checked

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
        planned = plans(batches, self.config, self.caches, self.budget)
        return [r for r in planned.results if r is not None], list(planned.plans)

    def _predicted(self, batches: Sequence[Program], plans: Sequence[Plan], figures: Any,
                   externals: Externals) -> float | None:
        """What the ``time`` model predicts for a run (as
        :func:`~fusionlab.costs.timemodel.predict_seconds`), on the WSP graphs kept with the plans:
        building them again took as long as the partitioning (26.5 s for LU at n = 100 on a
        loaded machine). ``None`` when a big batch's graph is not kept (a merge-cache hit)."""
        blocks = [[list(bp.instructions) for bp in p.blocks] for p in plans]
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
    notes = [f"other processes used {busy_cores:.1f} cores while this row was timed"] if busy else []
    return {"q1_seconds": q1, "q3_seconds": q3, "spread": (q3 - q1) / med if med else 0.0, "samples": list(times),
            "busy": busy, "warnings": notes}


def format_records(records: Sequence[Record]) -> str:
    """A text table of comparison records; a row with the plans of an earlier row (the same
    kernels, timed once) says so under the table.

    >>> nan = float("nan")
    >>> a = Record("bohrium", "greedy", 1, 1, 4.0, 0.5, 0.01, 0.009, 2.0, 0.0)
    >>> b = Record("max_contract", "greedy", 1, 1, 0.0, 0.5, 0.01, 0.009, 2.0, 0.0, same_kernels_as="greedy / bohrium")
    >>> print(format_records([a, b]).splitlines()[-1])
    * max_contract / greedy: the same kernels as greedy / bohrium, timed once (its times are that row's)
    """
    head = f"{'cost model':<14}{'algorithm':<12}{'blocks':>7}{'kernels':>8}{'cost':>14}{'compile s':>10}" \
           f"{'median s':>10}{'min s':>10}{'speed-up':>9}{'max err':>10}"
    lines = [head, "-" * len(head)]
    same = []
    for r in records:
        cost = "" if r.cost is None else f"{r.cost:g}"
        err = "" if r.max_abs_error is None else f"{r.max_abs_error:.1e}"
        lines.append(f"{r.cost_model:<14}{r.algorithm:<12}{r.blocks:>7}{r.kernels:>8}{cost:>14}"
                     f"{r.compile_seconds:>10.3f}{r.median_seconds:>10.4f}{r.min_seconds:>10.4f}"
                     f"{r.speedup:>8.2f}x{err:>10}{' *' if r.same_kernels_as else ''}")
        if r.same_kernels_as:
            same.append(f"* {r.cost_model} / {r.algorithm}: the same kernels as {r.same_kernels_as}, timed once "
                        "(its times are that row's)")
    return "\n".join(lines + same)
