"""Partition algorithms: one module each, one signature.

``algorithm(program_or_state, cost_model="bohrium", **options) -> PartitionResult``

========== ==================================================================
singleton  every instruction its own block (no fusion)
linear     one pass in program order (Sec. V-E)
unintrusive merges that never exclude an optimum (Fig. 6, Theorem 3)
greedy     merge over the heaviest legal weight edge (Fig. 7)
optimal    branch and bound from unintrusive, seeded by greedy (Fig. 11)
ilp        an exact integer program solved by HiGHS
exact      independent parts, each by branch and bound then the ILP
exhaustive every legal partition (small programs; the test oracle)
========== ==================================================================

Examples
--------
>>> from fusionlab.ir.examples import fig3
>>> r = partition(fig3(), "optimal", "bohrium")
>>> r.cost_elements, r.kernels
(38, 4)
>>> print(partition(fig3(), "linear").format_text())   # doctest: +ELLIPSIS
 1  [1]  COPY A, 0
...
linear / bohrium: 4 blocks, cost 496 bytes (62 elements), legal, ... ms
"""

from __future__ import annotations

from typing import Any, Callable

from fusionlab.support.budget import Budget
from fusionlab.costs import get_cost_model
from fusionlab.partition._common import ProgramOrState
from fusionlab.partition.cache import MergeCache
from fusionlab.partition.exact import exact
from fusionlab.partition.exhaustive import exhaustive
from fusionlab.partition.greedy import greedy
from fusionlab.partition.ilp import ilp
from fusionlab.partition.linear import linear
from fusionlab.partition.optimal import optimal
from fusionlab.partition.result import NodeOutcome, PartitionResult, SearchTrace, TraceNode, WeightEdge
from fusionlab.partition.singleton import singleton
from fusionlab.partition.unintrusive import unintrusive

ALGORITHMS: dict[str, Callable[..., PartitionResult]] = {
    "singleton": singleton,
    "linear": linear,
    "unintrusive": unintrusive,
    "greedy": greedy,
    "optimal": optimal,
    "ilp": ilp,
    "exact": exact,
    "exhaustive": exhaustive,
}

__all__ = [
    "ALGORITHMS", "SEARCHES", "partition", "at_least_known", "MergeCache", "PartitionResult", "SearchTrace", "TraceNode",
    "NodeOutcome", "WeightEdge", "evaluate", *ALGORITHMS,
]


#: The searches that prove a partition optimal when they finish; one that a budget or a
#: limit cut returns at least the best partition known to its caller (:func:`at_least_known`)
SEARCHES: frozenset[str] = frozenset({"optimal", "ilp", "exact", "exhaustive"})


def partition(
    program_or_state: ProgramOrState,
    algorithm: str = "greedy",
    cost_model: Any = "bohrium",
    *,
    cache: MergeCache | None = None,
    budget: Budget | None = None,
    known: PartitionResult | None = None,
    **options: Any,
) -> PartitionResult:
    """Partition a program with a named algorithm and cost model.

    A result that ``budget`` (or a search's time limit) cut is returned but never kept in
    ``cache``: it depends on the clock, and the next request may have time to finish.

    Parameters
    ----------
    program_or_state
        A :class:`~fusionlab.ir.bytecode.Program`, its :class:`~fusionlab.analysis.wsp.WSPGraph`, or a
        :class:`~fusionlab.analysis.wsp.PartitionState` to start from.
    algorithm
        One of :data:`ALGORITHMS`.
    cost_model
        A model name (``bohrium``, ``max_contract``, ``max_locality``, ``robinson``) or object.
    cache
        A :class:`MergeCache` to consult and fill (programs only).
    budget
        A :class:`~fusionlab.support.budget.Budget` for the whole call (every algorithm checks it
        between units of work and returns its best legal partition so far, marked not
        proven, with a note naming the phase cut); unlimited when ``None``. Building the
        graph of a program checks it too, and raises
        :class:`~fusionlab.support.budget.BudgetExceeded` when it runs out there (no partition yet).
    known
        The best legal partition the caller knows under the same cost model (greedy's, say):
        a search (:data:`SEARCHES`) that stops unproven with a costlier one returns this
        one instead (:func:`at_least_known`), so a cut search never reports worse than what
        was known before it started.
    **options
        Passed to the algorithm (``time_limit``, ``max_nodes`` for ``optimal``...).
    """
    if algorithm not in ALGORITHMS:
        raise ValueError(f"unknown algorithm {algorithm!r}; choose one of {', '.join(ALGORITHMS)}")
    model = get_cost_model(cost_model)
    key_of = getattr(model, "cache_key", None)
    from fusionlab.ir.bytecode import Program

    key = None
    if cache is not None and isinstance(program_or_state, Program) and key_of is not None:
        key = MergeCache.key(program_or_state, algorithm, key_of(), options)
        got = cache.get(key, program_or_state)
        if got is not None:
            return got
    result = ALGORITHMS[algorithm](program_or_state, model, budget=budget, **options)
    if algorithm in SEARCHES and known is not None:
        result = at_least_known(result, known)
    if key is not None and not result.budget_cut:
        cache.put(key, result)
    return result


def at_least_known(result: PartitionResult, known: PartitionResult) -> PartitionResult:
    """``result``, or ``known`` when ``result`` is an unproven search's answer costlier than
    that legal partition of the same program under the same cost model: the blocks of
    ``known`` then, with ``result``'s name, bound and trace, still not proven (unless the
    search's lower bound proves ``known`` optimal), and a note saying what happened.

    >>> from fusionlab.ir.examples import fig3
    >>> greedy_result = partition(fig3(), "greedy")
    >>> cut = partition(fig3(), "optimal", max_nodes=1, seed_greedy=False)
    >>> cut.cost > greedy_result.cost, cut.proven_optimal
    (True, False)
    >>> r = at_least_known(cut, greedy_result)
    >>> r.algorithm, r.cost == greedy_result.cost, r.blocks == greedy_result.blocks, r.proven_optimal
    ('optimal', True, True, False)
    >>> r.notes[-1]
    "stopped before it found a partition as cheap as greedy's (cost 304): greedy's partition is given"
    """
    if known.cost_model != result.cost_model or len(known.program) != len(result.program):
        raise ValueError(f"the known partition is of another program or cost model ({known.algorithm} / "
                         f"{known.cost_model}, {len(known.program)} instructions) than {result.algorithm} / "
                         f"{result.cost_model} ({len(result.program)} instructions)")
    if result.proven_optimal or not known.legal or known.cost >= result.cost:
        return result
    from dataclasses import replace

    proven = result.bound is not None and result.bound >= known.cost
    note = f"stopped before it found a partition as cheap as {known.algorithm}'s (cost {known.cost:g}): " \
           f"{known.algorithm}'s partition is given"
    return replace(result, blocks=known.blocks, cost=known.cost, cost_elements=known.cost_elements, legal=True,
                   proven_optimal=proven, notes=tuple(result.notes) + (note,))


def evaluate(
    program_or_graph: Any,
    blocks: Any,
    cost_model: Any = "bohrium",
    algorithm: str = "manual",
    *,
    budget: Budget | None = None,
) -> PartitionResult:
    """Cost and legality of a partition given by hand (blocks of 0-based indices).

    An illegal partition is still costed; its ``notes`` say why it is illegal (Def. 5),
    listing the first 20 pairs that may not share a block. The partition is given, so
    there is no best-so-far to return: when ``budget`` runs out (building the graph, or
    listing the pairs of an illegal block) :class:`~fusionlab.support.budget.BudgetExceeded` is raised.

    >>> from fusionlab.ir.examples import fig3
    >>> r = evaluate(fig3(), [range(17)])
    >>> r.legal, r.notes[0]
    (False, 'instructions 1 and 3 share a block: different iteration shapes ((4,) vs (5,))')
    """
    from fusionlab.analysis.wsp import partition_problems
    from fusionlab.partition._common import finish, setup

    ctx = setup(program_or_graph, cost_model, budget)
    blocks = [tuple(b) for b in blocks]
    return finish(ctx, algorithm, blocks, notes=partition_problems(ctx.graph, blocks, budget=ctx.budget))
