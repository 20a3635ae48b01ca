"""Pairs of starting blocks that no legal partition puts together: the exact searches' pruning.

Two blocks ``a`` and ``b`` are *separated* when a fuse-preventing edge joins them, or when a
dependency path ``a -> ... -> x -> ... -> b`` passes through a block ``x`` separated from
``a`` or from ``b``: a block holding ``a`` and ``b`` would have to hold ``x`` too (else the
path leaves the block and comes back, a cycle), and it cannot. The rule is applied in rounds
until nothing changes (at most ``rounds``; each round can only add pairs, so a cut-off
closure is still sound, only less complete).

The branch and bound drops the weight edges between separated blocks (an optimum never
merges along them); the ILP forbids their fusion variables and orders them strictly.

Examples
--------
>>> # 0 -> 1 -> 2, block 1 may not fuse with block 0: 0 and 2 can never share a block
>>> sep = separated(succ=[[1], [2], []], compatible=lambda a, b: {a, b} != {0, 1})
>>> [bin(s) for s in sep]
['0b110', '0b1', '0b1']
"""

from __future__ import annotations

from typing import Callable

from fusionlab.support.budget import UNLIMITED, Budget
from fusionlab.analysis.legality import conflict_masks
from fusionlab.analysis.wsp import PartitionState, bit_indices, reachability


def separated(succ: list[list[int]], compatible: Callable[[int, int], bool] | None = None,
              budget: Budget = UNLIMITED, rounds: int = 8, phase: str = "separation",
              initial: list[int] | None = None) -> list[int]:
    """For each block ``k`` (indices into ``succ``, a DAG), the bit mask of the blocks that
    can never share its block in a legal partition.

    ``compatible(a, b)`` says whether no fuse-preventing edge joins ``a`` and ``b``; or
    ``initial`` gives those pairs as symmetric bit masks (faster for many blocks).
    ``budget`` is checked once per block and round."""
    m = len(succ)
    reach = reachability(succ, budget, phase)
    pred: list[list[int]] = [[] for _ in range(m)]
    for a, targets in enumerate(succ):
        for b in targets:
            pred[b].append(a)
    coreach = reachability(pred, budget, phase)
    if initial is not None:
        sep = list(initial)
    else:
        if compatible is None:
            raise ValueError("separated needs compatible or initial")
        sep = [0] * m
        for a in range(m):
            budget.check(phase)
            for b in range(a + 1, m):
                if not compatible(a, b):
                    sep[a] |= 1 << b
                    sep[b] |= 1 << a
    for _ in range(rounds):
        grown = False
        for a in range(m):
            budget.check(phase)
            add = 0
            # a -> x -> b with x separated from a: b is separated from a (and, reversed, the
            # blocks before an x separated from a that comes before a)
            for x in bit_indices(reach[a] & sep[a]):
                add |= reach[x]
            for x in bit_indices(coreach[a] & sep[a]):
                add |= coreach[x]
            add &= ~sep[a]
            if add:
                grown = True
                sep[a] |= add
                for b in bit_indices(add):
                    sep[b] |= 1 << a
        if not grown:
            break
    return sep


def separated_blocks(state: PartitionState, ids: list[int], succ: list[list[int]], budget: Budget = UNLIMITED,
                     phase: str = "separation") -> list[int]:
    """:func:`separated` over the blocks ``ids`` of ``state`` (``succ``: their successors, as
    indices into ``ids``), starting from the fusion rule's pairs
    (:func:`~fusionlab.analysis.legality.conflict_masks`: shapes, explicit fuse-preventing edges and
    opaque instructions, no loop over pairs) — the branch and bound and the ILP."""
    initial = conflict_masks([state.summary(b) for b in ids], budget, phase)
    return separated(succ, budget=budget, initial=initial, phase=phase)
