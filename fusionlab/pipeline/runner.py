"""``run`` a captured program (or a bytecode program) with Numba kernels (``compare``, which
times several partitions against NumPy, is :mod:`fusionlab.pipeline.comparison`)."""

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

__all__ = ["run", "RunResult", "run_config", "check_against_numpy"]


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
