"""The planning passes: each prepared batch partitioned, its maps rematerialised, and its
blocks planned as kernels or NumPy calls.

:func:`plans` is what every front end runs between the preparing passes and the driver:
``fusionlab run``, each row of ``compare`` (the explorer's Compile & time), ``verify``,
sweeps and the benchmarks. A partition given from outside (a sweep's stored one, a test's)
is planned as given.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Mapping, Sequence

from fusionlab.support.budget import UNLIMITED, Budget, BudgetExceeded
from fusionlab.ir.bytecode import Program
from fusionlab.costs import get_cost_model
from fusionlab.backend.numba.capabilities import NUMBA
from fusionlab.backend.numba.plan import Plan, one_use_kernels, plan
from fusionlab.partition import SEARCHES, MergeCache, PartitionResult, partition
from fusionlab.passes.remat import rematerialise
from fusionlab.analysis.wsp import PartitionState, WSPGraph
from fusionlab.pipeline.caches import PipelineCaches
from fusionlab.pipeline.config import Pass, PipelineConfig

__all__ = ["Planned", "partition_batch", "plans", "plans_key"]

#: blocks as the planner takes them
Blocks = tuple[tuple[int, ...], ...]


@dataclass(frozen=True)
class Planned:
    """Each batch's partition (``None`` for a partition given from outside), its blocks
    after the post-partition rewrites, and the kernel plans in the order they run."""

    results: tuple[PartitionResult | None, ...]
    blocks: tuple[Blocks, ...]
    plans: tuple[Plan, ...]

    @property
    def cost(self) -> float:
        """The partitions' cost under the configuration's model (0 for given ones)."""
        return sum(r.cost for r in self.results if r is not None)


def partition_batch(batch: Program, config: PipelineConfig, caches: PipelineCaches,
                    budget: Budget = UNLIMITED) -> PartitionResult:
    """``batch``'s partition under ``config``: the merge cache's when alike batches were
    partitioned before, else computed on the batch's WSP graph, which ``caches`` keep
    (building it alone can take the budget: 20,000 instructions of LU at n = 100, 13.6 s on a
    loaded machine). A greedy search the budget cut goes on from its merges so far at the
    next call (greedy from that state takes the merges it would have taken next). A search
    (:data:`~fusionlab.partition.SEARCHES`) gets greedy's partition as the one known: cut, it
    returns at least that (:func:`~fusionlab.partition.at_least_known`). A partition the
    front end showed (``caches.shown``) is returned as it is."""
    shown = caches.shown.get(batch, (config.algorithm, str(getattr(config.cost_model, "name", config.cost_model))))
    if shown is not None:   # the partition the user saw is the one timed: never searched again
        return shown
    options = config.partition_options
    model = get_cost_model(config.cost_model)
    key_of = getattr(model, "cache_key", None)
    key = None if key_of is None else MergeCache.key(batch, config.algorithm, key_of(), options)
    got = None if key is None else caches.merge.get(key, batch)
    if got is not None:
        return got
    graph = caches.graphs.get(batch)
    if graph is None:
        # built for the backend that plans the blocks: its capabilities decide what may fuse
        graph = WSPGraph(batch, budget=budget, capabilities=NUMBA)
        caches.graphs.put(batch, graph)
    cut_key = (config.algorithm, key)
    start: WSPGraph | PartitionState = graph
    resumed = caches.greedy_cuts.get(batch, cut_key) if config.algorithm == "greedy" else None
    if resumed is not None:
        start = PartitionState(graph, resumed.blocks)
    known = None
    if config.algorithm in SEARCHES:
        # a search starts from the best partition known, greedy's at least, so one the budget
        # cuts never reports worse (greedy's is kept in the merge cache: the explorer's, a row's)
        try:
            known = partition_batch(batch, replace(config, algorithm="greedy", options=()), caches, budget)
        except BudgetExceeded:   # not even the graph within the budget: the search says so itself
            known = None
    result = partition(start, config.algorithm, model, budget=budget, known=known, **options)
    if result.budget_cut and config.algorithm == "greedy":
        caches.greedy_cuts.put(batch, result, cut_key)
    else:
        caches.greedy_cuts.pop(batch, cut_key)
    if key is not None:
        caches.merge.put(key, result)  # not when the budget cut it (MergeCache.put)
    return result


def plans(batches: Sequence[Program], config: PipelineConfig, caches: PipelineCaches | None = None,
          budget: Budget = UNLIMITED, partitions: Mapping[int, Sequence[Sequence[int]]] | None = None) -> Planned:
    """The planning passes on prepared ``batches`` (:func:`fusionlab.pipeline.prepare`).

    ``partitions``: batch index to blocks chosen elsewhere, planned as given (no partition
    search, no rematerialisation: they number the batches' instructions as given); a batch
    it does not name is partitioned as ``config`` says. Plans are
    per batch: a kernel's arguments are views of that batch's own arrays; partitions repeat
    through the merge cache and kernels through the kernel cache.

    Examples
    --------
    >>> from fusionlab.ir.examples import fig3
    >>> got = plans([fig3()], PipelineConfig("greedy", "bohrium", min_size=0))
    >>> len(got.plans), got.cost == got.results[0].cost
    (1, True)
    """
    caches = caches if caches is not None else PipelineCaches()
    results: list[PartitionResult | None] = []
    all_blocks: list[Blocks] = []
    out: list[Plan] = []
    for k, batch in enumerate(batches):
        if partitions is not None and k in partitions:
            result, blocks = None, tuple(tuple(b) for b in partitions[k])
        else:
            result = partition_batch(batch, config, caches, budget) if config.runs(Pass.PARTITION) else None
            blocks = result.blocks if result is not None else tuple((i,) for i in range(len(batch)))
            if config.runs(Pass.REMATERIALISE):
                blocks = tuple(tuple(b) for b in rematerialise(batch, blocks).blocks)
        budget.check("planning kernels")
        results.append(result)
        all_blocks.append(blocks)
        detail = (blocks, config.min_size)
        got = caches.plans.get(batch, detail)
        if got is None:   # seconds for thousands of kernels; alike batches ordered once
            got = plan(batch, blocks, config.min_size, orders=caches.orders)
            caches.plans.put(batch, got, detail)
        out.append(got)
    planned = one_use_kernels(out) if config.runs(Pass.ONE_USE_KERNELS) else out
    return Planned(tuple(results), tuple(all_blocks), tuple(planned))


def plans_key(plans: Sequence[Plan]) -> tuple[tuple[tuple[tuple[int, ...], str | None], ...], ...]:
    """What makes two runs the same work: batch by batch, each block's instructions and the
    kernel source that runs it (``None``: NumPy runs it). Two rows of a comparison whose
    plans have one key run the same kernels in the same order: they are timed once.

    >>> from fusionlab.ir.examples import fig3
    >>> from fusionlab.pipeline.config import PipelineConfig
    >>> a = plans([fig3()], PipelineConfig("greedy", "bohrium", min_size=0)).plans
    >>> b = plans([fig3()], PipelineConfig("greedy", "max_contract", min_size=0)).plans
    >>> c = plans([fig3()], PipelineConfig("singleton", "bohrium", min_size=0)).plans
    >>> plans_key(a) == plans_key(b), plans_key(a) == plans_key(c)
    (True, False)
    """
    return tuple(tuple((bp.instructions, None if bp.compiled is None else bp.compiled.source) for bp in p.blocks)
                 for p in plans)
