"""The pipeline's one configuration, and the names of its passes.

Every front end builds a :class:`PipelineConfig` and hands it to the pipeline
(:mod:`fusionlab.pipeline`); nothing a pass decides depends on which front end asked.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum
from typing import Any

from fusionlab.backend.numba.plan import DEFAULT_MIN_SIZE

__all__ = ["Pass", "Numbering", "PipelineConfig", "DEFAULT_PASSES", "PREPARING", "OPTIMAL_MAX_NODES"]


class Pass(Enum):
    """A pass of the pipeline, in the order :data:`DEFAULT_PASSES` runs them."""

    #: drop the parts of writes nothing reads (:mod:`fusionlab.passes.deadwrites`)
    DEAD_WRITES = "dead writes"
    #: rewrite the runs of an unrolled Python loop as 2-D instructions (:mod:`fusionlab.passes.reroll`)
    REROLL = "reroll"
    #: free an array whose next use is a later batch's DEL at its last use (:mod:`fusionlab.passes.deadbases`)
    FREE_EARLY = "free early"
    #: the dead-writes pass again, on the batches freed early (a DEL moved earlier kills more)
    DEAD_WRITES_AFTER_FREE = "dead writes after free early"
    #: the algorithm under the cost model (:mod:`fusionlab.partition`)
    PARTITION = "partition"
    #: a map stored only for a later block recomputed in that block (:mod:`fusionlab.passes.remat`)
    REMATERIALISE = "rematerialise"
    #: kernel or NumPy for each block, the blocks ordered (:func:`fusionlab.backend.numba.plan.plan`)
    PLAN = "plan"
    #: kernels called once among hundreds run as NumPy (:func:`~fusionlab.backend.numba.plan.one_use_kernels`)
    ONE_USE_KERNELS = "one-use kernels"


class Numbering(Enum):
    """Which batches a partition given from outside numbers the instructions of."""

    #: the batches as captured: nothing may rewrite them before planning (a test's or a
    #: calibration's hand-made blocks)
    CAPTURED = "captured"
    #: the batches the preparing passes make: a partition the pipeline found before (a
    #: sweep's stored one, already rematerialised), planned on the same prepared batches again
    PREPARED = "prepared"


#: The passes that rewrite the batches before they are partitioned (:func:`fusionlab.pipeline.prepare`)
PREPARING: tuple[Pass, ...] = (Pass.DEAD_WRITES, Pass.REROLL, Pass.FREE_EARLY, Pass.DEAD_WRITES_AFTER_FREE)

#: Every pass, in order: what ``fusionlab run``, ``compare``, the explorer, ``verify`` and sweeps run
DEFAULT_PASSES: tuple[Pass, ...] = tuple(Pass)

#: The ``optimal`` algorithm's node limit in every front end (an exact search past it stops
#: with its best partition, marked not proven)
OPTIMAL_MAX_NODES = 20_000


@dataclass(frozen=True)
class PipelineConfig:
    """What the pipeline runs, in one object: the algorithm, the cost model, the smallest
    block worth a parallel kernel, and which passes.

    ``partitions`` given to :func:`fusionlab.pipeline.build` (a partition chosen elsewhere)
    skip the partition search and every pass that would renumber what they number: see
    :meth:`for_given_partitions`.

    Examples
    --------
    >>> c = PipelineConfig("optimal", "max_contract")
    >>> c.partition_options
    {'max_nodes': 20000}
    >>> Pass.REMATERIALISE in c.passes, Pass.REROLL in c.without(Pass.REROLL).passes
    (True, False)
    """

    algorithm: str = "greedy"
    cost_model: Any = "bohrium"
    min_size: int = DEFAULT_MIN_SIZE
    passes: tuple[Pass, ...] = DEFAULT_PASSES
    #: options for the algorithm beside its defaults (``("time_limit", 5.0)``, ``("max_nodes", 1000)``)
    options: tuple[tuple[str, Any], ...] = ()

    @property
    def partition_options(self) -> dict[str, Any]:
        """The options the algorithm is called with (the same in every front end)."""
        default = {"max_nodes": OPTIMAL_MAX_NODES} if self.algorithm == "optimal" else {}
        return {**default, **dict(self.options)}

    @property
    def model_name(self) -> str:
        """The cost model's name (a model object's ``name``)."""
        return str(getattr(self.cost_model, "name", self.cost_model))

    def runs(self, p: Pass) -> bool:
        """Whether the pass ``p`` is on."""
        return p in self.passes

    def without(self, *passes: Pass) -> "PipelineConfig":
        """This configuration with ``passes`` off."""
        return replace(self, passes=tuple(p for p in self.passes if p not in passes))

    def for_given_partitions(self, numbering: Numbering = Numbering.CAPTURED) -> "PipelineConfig":
        """The passes that keep a given partition's instruction numbers: planning only when
        it numbers the batches as captured; the preparing passes too when it numbers the
        prepared batches (they make the same batches again: they are deterministic).

        >>> PipelineConfig().for_given_partitions().passes
        (<Pass.PLAN: 'plan'>, <Pass.ONE_USE_KERNELS: 'one-use kernels'>)
        >>> Pass.REROLL in PipelineConfig().for_given_partitions(Numbering.PREPARED).passes
        True
        """
        kept = (Pass.PLAN, Pass.ONE_USE_KERNELS) + (PREPARING if numbering is Numbering.PREPARED else ())
        return replace(self, passes=tuple(p for p in self.passes if p in kept))

    def as_captured(self) -> "PipelineConfig":
        """This configuration without the preparing passes: the batches partitioned as
        captured (or as written: the paper's figures are of its Fig. 3 as written)."""
        return self.without(*PREPARING)

    @property
    def given(self) -> bool:
        """Whether this configuration plans a partition given from outside (no search)."""
        return not self.runs(Pass.PARTITION)
