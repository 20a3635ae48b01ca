"""Unintrusive merge (Fig. 6, Theorem 3): merge only what some optimal partition merges.

Block ``u`` is merged into ``v`` when

1. ``u`` is joined by dependencies to no block but ``v`` in the transitive reduction of
   the partition graph (pendant, or isolated): every other dependency of ``u`` passes
   through ``v``,
2. ``v`` is the only block whose merge with ``u`` saves more than the model's
   ``merge_bonus`` and is not blocked by a dependency path (the degree of ``u`` in the
   legal weight edges is 1, as FINDCANDIDATE counts it; a block joined to ``u`` by a path
   can only share ``u``'s block together with ``v``, since every path from a pendant
   ``u`` passes through ``v``),
3. every block that may not share a block with ``u`` may not share one with ``v`` either
   (the non-fusible sets of Def. 18: ``θ[u] ⊆ θ[v]``), and
4. the merge is legal (Lemma 1).

Then moving ``u`` into ``v``'s block turns any legal partition into a legal one that costs
no more, for models whose savings are *pairwise* (see ``docs/cost-models.md``), so the
merge never excludes every optimum. For other models nothing is merged.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from fusionlab.support.budget import UNLIMITED, Budget, BudgetExceeded
from fusionlab.costs import Evaluator
from fusionlab.analysis.wsp import PartitionState, bit_indices
from fusionlab.partition._common import (
    BaseIndex, ProgramOrState, SavingIndex, announce, cut_note, finish, setup, sparse,
)
from fusionlab.partition.result import PartitionResult

_EPS = 1e-9


def _covers(state: PartitionState, u: int, v: int) -> bool:
    """Whether every block forbidden with ``u`` is forbidden with ``v`` (θ[u] ⊆ θ[v]).

    Read off the three tests of :func:`~fusionlab.analysis.legality.fusion_conflict`: the blocks an
    opaque or shaped ``u`` is kept from by the opaque and shape tests are kept from ``v`` too
    when ``v`` is opaque as well, or has ``u``'s shape; ``u``'s explicit partners are asked
    one by one. A ``False`` only forgoes a merge, so the shortcuts may be conservative."""
    if state.opaque[u] and not state.opaque[v]:
        return False
    du = state.domain[u]
    if du is not None and state.domain[v] != du:
        return False
    for i in bit_indices(state.explicit[u] & ~state.members[v]):
        x = state.block_of[i]
        if x != u and state.forbidden_between(v, x) is None:
            return False
    return True


def unintrusive_merge(
    state: PartitionState, ev: Evaluator, gas: int | None = None, budget: Budget | None = None,
    merges: list[tuple[int, int]] | None = None, phase: str = "unintrusive",
) -> list[tuple[int, int]]:
    """Merge unintrusively fusible blocks of ``state`` in place; returns the merges made.

    ``budget`` is checked before each block is examined; when it runs out
    :class:`~fusionlab.support.budget.BudgetExceeded` (naming ``phase``) propagates and ``state``
    holds the merges made so far (each one legal and unintrusive), also appended to
    ``merges`` when given.
    """
    budget = UNLIMITED if budget is None else budget
    merges = [] if merges is None else merges
    if not ev.pairwise or not ev.additive:
        return merges
    announce(budget, phase)
    index = BaseIndex(state)
    # blocks that can save with u (exactly those of a shared view or created or freed base,
    # for the built-in models): fewer to price than those sharing a base
    savers = SavingIndex(state) if sparse(ev) else None
    work = deque(sorted(state.members, key=lambda b: state.first[b]))
    queued = set(work)
    gas = gas if gas is not None else 20 * (len(state.members) + 1) ** 2 + 10_000
    while work:
        gas -= 1
        if gas < 0:
            raise RuntimeError("unintrusive ran out of gas; this is a bug, please report it")
        budget.check(phase)
        u = work.popleft()
        queued.discard(u)
        if u not in state.members:
            continue
        hub = state.pendant_on(u)
        if hub is None:
            continue
        mu = state.members[u]
        free = [
            x for x in (index.partners(u) if savers is None else {savers.find(y) for y in savers.partners(u)})
            if ev.saving(mu, state.members[x]) > ev.merge_bonus + _EPS
            and (x == hub or not (state.reaches(u, x) or state.reaches(x, u)))
        ]
        if len(free) != 1:
            continue
        v = free[0]
        if (hub != -1 and hub != v) or not _covers(state, u, v) or not state.can_merge(u, v):
            continue
        ev.merged(mu, state.members[v])
        z = state.merge(u, v, reuse=True)
        index.merged(u, v, z)
        if savers is not None:
            savers.merged(u, v, z)
        merges.append((u, v))
        for y in {z} | index.partners(z) | state.neighbours(z):
            if y not in queued:
                work.append(y)
                queued.add(y)
    return merges


def unintrusive(
    program_or_state: ProgramOrState, cost_model: Any = "bohrium", *, budget: Budget | None = None
) -> PartitionResult:
    """The largest unintrusive partition (the starting point of ``optimal``).

    Cut by ``budget``, it returns the merges made so far (legal, each unintrusive).

    Examples
    --------
    >>> from fusionlab.ir.examples import fig3
    >>> r = unintrusive(fig3())
    >>> r.legal, r.cost_elements, r.kernels
    (True, 74, 14)
    """
    ctx = setup(program_or_state, cost_model, budget)
    notes, cut = [], ""
    if not (ctx.evaluator.pairwise and ctx.evaluator.additive):
        notes.append("nothing merged: unintrusive merging is safe only for additive, pairwise models")
    merges: list[tuple[int, int]] = []
    try:
        unintrusive_merge(ctx.state, ctx.evaluator, budget=ctx.budget, merges=merges, phase="unintrusive: merging")
    except BudgetExceeded as exc:
        notes.append(cut_note(exc, f"{len(merges)} unintrusive merges made before it"))
        cut = exc.phase
    return finish(ctx, "unintrusive", ctx.state.blocks(), notes=notes, budget_cut=cut)
