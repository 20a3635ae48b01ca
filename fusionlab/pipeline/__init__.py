"""The one pipeline from a captured cell to the kernel plans that run.

Every front end runs it with one :class:`PipelineConfig`: ``fusionlab run``, ``compare``
and the explorer's Compile & time (each row), ``verify``, sweeps and the benchmarks. What
the explorer times is what ``fusionlab run`` executes, because both call :func:`build`.

The passes, in order (:data:`PASSES`; :class:`Pass` names them, the configuration turns
them on):

========================== ============================= ===========================================
pass                       module                        what it does
========================== ============================= ===========================================
dead writes                :mod:`fusionlab.passes.deadwrites`   drops the parts of writes nothing reads
reroll                     :mod:`fusionlab.passes.reroll`       an unrolled loop's runs become 2-D instructions
free early                 :mod:`fusionlab.passes.deadbases`    an array whose next use is a later batch's
                                                         DEL dies at its last use
dead writes after free     :mod:`fusionlab.passes.deadwrites`   the first pass again (a DEL moved kills more)
partition                  :mod:`fusionlab.partition`    the algorithm under the cost model
rematerialise              :mod:`fusionlab.passes.remat`        a map stored only for a later block is
                                                         recomputed in that block
plan                       ``backend.numba.plan``     kernel or NumPy per block; the blocks ordered
one-use kernels            ``backend.numba.plan``     among hundreds of kernels, those called once
                                                         run as NumPy
========================== ============================= ===========================================

The first four are :func:`prepare` (they rewrite the batches, within the budget: past it
the rest stays as captured); the last four are :func:`plans`. A partition given from outside
is planned as given (:meth:`PipelineConfig.for_given_partitions`).

Examples
--------
>>> from fusionlab.capture import capture
>>> cap = capture("import numpy as np\\nx = np.arange(8.0)\\ny = np.sqrt(x) * 2 + x")
>>> built = build(cap, PipelineConfig("greedy", "bohrium", min_size=0))
>>> [bp.numbered for bp in built.plans[0].blocks if bp.compiled is not None]   # one kernel
[[1, 2, 3, 4, 5, 6, 7, 8]]
>>> built.config.passes == DEFAULT_PASSES, len(built.batches) == len(built.prepared.captured)
(True, True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from fusionlab.support.budget import UNLIMITED, Budget
from fusionlab.ir.bytecode import Program
from fusionlab.backend.numba.plan import Plan
from fusionlab.pipeline.caches import PipelineCaches
from fusionlab.pipeline.config import DEFAULT_PASSES, OPTIMAL_MAX_NODES, PREPARING, Numbering, Pass, PipelineConfig
from fusionlab.pipeline.planning import Planned, partition_batch, plans
from fusionlab.pipeline.preparing import Prepared, prepare, prepare_batches, target_parts

__all__ = ["run", "compare", "Pass", "Numbering", "PASSES", "PipelineConfig", "PipelineCaches", "Prepared", "Planned", "Built", "prepare",
           "plans", "partition_batch", "build", "prepare_kept", "prepare_batches", "target_parts", "DEFAULT_PASSES", "PREPARING", "OPTIMAL_MAX_NODES"]

#: The passes by stage, in the order they run: (stage, passes, entry point)
PASSES: tuple[tuple[str, tuple[Pass, ...], Callable[..., Any]], ...] = (
    ("prepare", PREPARING, prepare),
    ("plans", (Pass.PARTITION, Pass.REMATERIALISE, Pass.PLAN, Pass.ONE_USE_KERNELS), plans),
)


@dataclass(frozen=True)
class Built:
    """What the pipeline made of a target: the prepared batches and their plans."""

    config: PipelineConfig
    prepared: Prepared
    planned: Planned

    @property
    def plans(self) -> tuple[Plan, ...]:
        """The kernel plans, batch by batch, as the driver runs them."""
        return self.planned.plans

    @property
    def batches(self) -> tuple[Program, ...]:
        """The batches as partitioned (after the preparing passes)."""
        return self.prepared.programs

    @property
    def inputs(self) -> Mapping[str, np.ndarray]:
        """The run's inputs (with the arrays of the literals rerolling made)."""
        return self.prepared.inputs


def build(target: Any, config: PipelineConfig, *, caches: PipelineCaches | None = None,
          prepare_budget: Budget = UNLIMITED, plan_budget: Budget = UNLIMITED,
          partitions: Mapping[int, Sequence[Sequence[int]]] | None = None,
          inputs: Mapping[str, np.ndarray] | None = None) -> Built:
    """The whole pipeline on ``target`` (a :class:`~fusionlab.capture.Capture` or a
    program): :func:`prepare`, then :func:`plans`, under one configuration.

    ``caches`` keep the work between calls (an explorer session's clicks, a comparison's
    rows: the prepared batches are kept per target); ``prepare_budget`` bounds the preparing
    passes (past it the rest stays as captured), ``plan_budget`` the partitioning and planning
    (a search it cuts returns its best so far; building a graph past it raises
    :class:`~fusionlab.support.budget.BudgetExceeded`); ``partitions`` (batch index to blocks) are planned as given: on
    the batches as captured, unless ``config`` is already one for given partitions
    (:meth:`PipelineConfig.for_given_partitions`: with :attr:`Numbering.PREPARED` they number the
    batches its preparing passes make); ``inputs``: arrays given beside the target's own.
    """
    caches = caches if caches is not None else PipelineCaches()
    if partitions is not None and not config.given:   # a search asked for: the batches as captured
        config = config.for_given_partitions()
    prepared = prepare_kept(target, config, caches, prepare_budget, inputs)
    return Built(config, prepared, plans(prepared.programs, config, caches, plan_budget, partitions))


def prepare_kept(target: Any, config: PipelineConfig, caches: PipelineCaches, budget: Budget = UNLIMITED,
                 inputs: Mapping[str, np.ndarray] | None = None) -> Prepared:
    """:func:`prepare`, kept in ``caches`` per target and passes: every row of a comparison
    and every click of the explorer then partitions the same batch objects (graphs and plans
    are kept by the batch's identity). ``inputs`` given are this call's values: not kept."""
    prepared = caches.prepared.get(target, config.passes) if inputs is None else None
    if prepared is None:
        prepared = prepare(target, config, budget, inputs)
        if inputs is None:
            caches.prepared.put(target, prepared, config.passes)
    return prepared


def run(*args: Any, **kwargs: Any) -> Any:
    """See :func:`fusionlab.pipeline.runner.run` (imported when called: the runner loads Numba)."""
    from fusionlab.pipeline.runner import run as _run

    return _run(*args, **kwargs)


def compare(*args: Any, **kwargs: Any) -> Any:
    """See :func:`fusionlab.pipeline.comparison.compare` (imported when called: it loads Numba)."""
    from fusionlab.pipeline.comparison import compare as _compare

    return _compare(*args, **kwargs)
