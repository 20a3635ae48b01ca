"""Tightening the ILP of :mod:`.ilp` without changing its optimum (issue 16).

Three devices, each exact (it removes no legal partition's solution, and adds none):

- **Positions by residue.** A block never mixes iteration shapes, and an opaque instruction
  runs alone (beside DELs and SYNCs at most). So each starting block with a shape (or an
  opaque one) gets a *residue* ``r`` (one per shape, one per opaque block) and the position
  ``o = S * q + r`` with an integer ``q`` (``S`` residues); shapeless blocks (DEL, SYNC) keep
  a free integer position. Two blocks of different residues can then never share a position,
  so their fuse-preventing pair needs no binary direction variable: on a program with two
  shapes that removes about half of all pairs' binaries. Every legal partition still has
  positions: number its blocks in a topological order ``t`` and give each block ``S * t + r``
  (its residue, 0 for a block of DELs and SYNCs alone).
- **Convexity rows.** When a block holds ``a`` and ``b`` and a path ``a -> x -> b`` runs
  between them, it holds ``x`` too (else the path leaves the block and comes back): so
  ``s[a, b] <= s[a, x]`` for the first step ``x`` of such a path and ``s[a, b] <= s[x, b]``
  for its last. The linear relaxation of the big-M rows alone lets ``s`` approach 1 for every
  pair allowed to fuse; these rows tie a saving to the blocks in between.
- **Clique rows.** Blocks that are pairwise separated (no legal partition puts two of them
  together, :mod:`.separation`) share a block with ``b`` one at a time:
  ``sum of s[b, c] <= 1`` over such a set ``c``. A DEL of a base two shapes read joins one
  shape's block, not both.

All three hold for the exact "same block" indicators of every legal partition, so the ILP's
optimum is unchanged; ``tests/test_exact.py`` checks the ILP against exhaustive search.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from fusionlab.support.budget import Budget
from fusionlab.analysis.wsp import PartitionState, bit_indices


class Positions:
    """The position ``o[k] = step[k] * q[k] + residue[k]`` of each starting block ``k``.

    ``model`` is the ILP under construction (``var(lo, hi, integer)`` and ``row(coef, lo, hi)``).

    >>> class M:
    ...     def __init__(self): self.n = 0
    ...     def var(self, lo, hi, integer, cost=0.0): self.n += 1; return self.n - 1
    >>> from fusionlab import parse
    >>> from fusionlab.analysis.wsp import WSPGraph
    >>> p = parse("ARRAY A float64[4]\\nARRAY B float64[5]\\nCOPY A, 1\\nCOPY B, 2\\nDEL A")
    >>> state = PartitionState(WSPGraph(p))
    >>> pos = Positions(M(), state, sorted(state.members))
    >>> pos.residue, pos.step, pos.big
    ([0, 1, None], 2, 6)
    >>> pos.distinct(0, 1), pos.distinct(0, 2)
    (True, False)
    """

    def __init__(self, model: Any, state: PartitionState, ids: list[int], residues: bool = True) -> None:
        m = len(ids)
        keys: dict[Any, int] = {}
        residue: list[int | None] = []
        for k, b in enumerate(ids):
            key: Any = ("opaque", k) if state.opaque[b] else state.domain[b]
            residue.append(None if key is None or not residues else keys.setdefault(key, len(keys)))
        self.residue = residue
        self.step = max(len(keys), 1)
        self.big = self.step * max(m, 1)  # every position lies in [0, big - 1]
        self.q = [model.var(0, max(m, 1) - 1 if r is not None else self.big - 1, True) for r in residue]

    def coef(self, k: int) -> float:
        return float(self.step) if self.residue[k] is not None else 1.0

    def const(self, k: int) -> int:
        r = self.residue[k]
        return 0 if r is None else r

    def distinct(self, a: int, b: int) -> bool:
        """Whether ``a`` and ``b`` can never share a position (different residues)."""
        ra, rb = self.residue[a], self.residue[b]
        return ra is not None and rb is not None and ra != rb

    def diff(self, b: int, a: int, extra: dict[int, float] | None = None) -> tuple[dict[int, float], float]:
        """``o[b] - o[a]`` as (coefficients, constant), plus ``extra`` terms."""
        coef = dict(extra or {})
        coef[self.q[b]] = coef.get(self.q[b], 0.0) + self.coef(b)
        coef[self.q[a]] = coef.get(self.q[a], 0.0) - self.coef(a)
        return coef, float(self.const(b) - self.const(a))

    def at_least(self, model: Any, b: int, a: int, gap: float, extra: dict[int, float] | None = None) -> None:
        """The row ``o[b] - o[a] + extra >= gap``."""
        coef, c = self.diff(b, a, extra)
        model.row(coef, gap - c)

    def value(self, k: int, x: list[float]) -> int:
        """The position of block ``k`` in the solution ``x``."""
        return int(round(self.coef(k) * x[self.q[k]])) + self.const(k)

    def start(self, blocks_of_unit: list[int], order: list[int]) -> dict[int, float]:
        """Positions of a legal partition: ``blocks_of_unit[k]`` is unit ``k``'s block and
        ``order[t]`` the block at topological index ``t``."""
        rank = {blk: t for t, blk in enumerate(order)}
        res_of: dict[int, int] = {}
        for k, blk in enumerate(blocks_of_unit):
            if self.residue[k] is not None:
                res_of[blk] = self.residue[k]  # type: ignore[assignment]
        out = {}
        for k, blk in enumerate(blocks_of_unit):
            o = self.step * rank[blk] + res_of.get(blk, 0)
            out[self.q[k]] = float(rank[blk] if self.residue[k] is not None else o)
        return out


def implied_orders(reach: list[int], sep: list[int], budget: Budget, phase: str) -> list[int]:
    """For each block ``a``, the blocks ``b`` whose strict order after ``a`` follows from
    other rows: a block ``x`` separated from ``a`` and after it comes before ``b`` (or
    reaches it), or ``a`` reaches a block ``x`` that ``b`` is separated from and after.
    Then ``o[b] >= o[x] >= o[a] + 1`` (or ``o[b] >= o[x] + 1 >= o[a] + 1``) sums other
    rows, so the row of ``(a, b)`` changes neither the relaxation nor the optimum:
    Lattice Boltzmann's 1,227 blocks need a few thousand of its 200,000 order rows.

    >>> # 0 -> 1 -> 2, all pairwise separated: 0 < 2 follows from 0 < 1 and 1 < 2
    >>> from fusionlab.support.budget import UNLIMITED
    >>> implied_orders([0b110, 0b100, 0], [0b110, 0b101, 0b011], UNLIMITED, "doc")
    [4, 0, 0]
    """
    after = [reach[a] & sep[a] for a in range(len(reach))]
    out = []
    for a in range(len(reach)):
        budget.check(phase)
        mask = 0
        for x in bit_indices(after[a]):
            mask |= reach[x]
        for x in bit_indices(reach[a]):
            mask |= after[x]
        out.append(mask)
    return out


def convexity_rows(model: Any, pairs: list[tuple[int, int]], succ: list[list[int]], reach: list[int],
                   s: Callable[[int, int], int | None], var_of: dict[tuple[int, int], int], budget: Budget,
                   phase: str) -> int:
    """``s[a, b] <= s[a, x]`` and ``s[a, b] <= s[x, b]`` for the first and last steps ``x`` of
    the paths from ``a`` to ``b`` (``pairs``: ``a`` before ``b`` in program order); returns the
    number of rows. ``s`` creates a fusion variable (``None``: the pair is separated)."""
    pred: list[list[int]] = [[] for _ in succ]
    for a, targets in enumerate(succ):
        for b in targets:
            pred[b].append(a)
    rows = 0
    for a, b in pairs:
        budget.check(phase)
        v = var_of[(a, b)]
        if reach[b] >> a & 1:
            a, b = b, a  # a block's first instruction orders the blocks, not their paths
        elif not reach[a] >> b & 1:
            continue
        steps = [(a, x) for x in succ[a] if x != b and reach[x] >> b & 1]
        steps += [(x, b) for x in pred[b] if x != a and reach[a] >> x & 1]
        for u, w in steps:
            other = s(u, w)
            model.row({v: 1.0} if other is None else {v: 1.0, other: -1.0}, -np.inf, 0.0)
            rows += 1
    return rows


def clique_rows(model: Any, var_of: dict[tuple[int, int], int], sep: list[int], budget: Budget,
                phase: str) -> int:
    """``sum of s[b, c] <= 1`` over greedy maximal sets of pairwise separated partners ``c`` of
    each block ``b``; returns the number of rows."""
    partners: dict[int, list[int]] = {}
    for a, b in var_of:
        partners.setdefault(a, []).append(b)
        partners.setdefault(b, []).append(a)
    seen: set[tuple[int, frozenset[int]]] = set()
    rows = 0
    for b, near in partners.items():
        budget.check(phase)
        near_mask = sum(1 << c for c in near)
        for c in sorted(near):
            if not sep[c] & near_mask:
                continue
            clique, allowed = [c], sep[c] & near_mask
            for d in bit_indices(allowed):
                if allowed >> d & 1:
                    clique.append(d)
                    allowed &= sep[d]
            key = (b, frozenset(clique))
            if len(clique) < 2 or key in seen:
                continue
            seen.add(key)
            model.row({var_of[(min(b, d), max(b, d))]: 1.0 for d in clique}, -np.inf, 1.0)
            rows += 1
    return rows


@dataclass
class Layout:
    """Where the ILP keeps what: positions, fusion variables ``s_var[(a, b)]`` (``a < b``),
    direction variables ``ys`` (``(y, a, b)``: ``y = 1`` puts ``b`` before ``a``) and
    payment variables ``pays`` (``(p, the fusion variables that excuse it)``)."""

    pos: Positions
    masks: list[int]
    s_var: dict[tuple[int, int], int] = field(default_factory=dict)
    ys: list[tuple[int, int, int]] = field(default_factory=list)
    pays: list[tuple[int, list[int]]] = field(default_factory=list)

    def start(self, n_vars: int, blocks: list[list[int]], succ: list[list[int]]) -> list[float] | None:
        """The solution of the legal partition ``blocks`` (instructions), for HiGHS to start
        from; ``None`` when a starting block is split by it. ``succ``: the starting blocks'
        successors (indices into ``masks``)."""
        block_of: dict[int, int] = {}
        for j, b in enumerate(blocks):
            for i in b:
                block_of[i] = j
        unit_block = []
        for mask in self.masks:
            got = {block_of.get(i, -1) for i in bit_indices(mask)}
            if len(got) != 1 or -1 in got:
                return None
            unit_block.append(got.pop())
        order = _topological(len(blocks), {(unit_block[a], unit_block[b]) for a, t in enumerate(succ) for b in t
                                           if unit_block[a] != unit_block[b]})
        if order is None:
            return None
        x = [0.0] * n_vars
        for j, v in self.pos.start(unit_block, order).items():
            x[j] = v
        for (a, b), v in self.s_var.items():
            x[v] = 1.0 if unit_block[a] == unit_block[b] else 0.0
        for y, a, b in self.ys:
            x[y] = 1.0 if self.pos.value(a, x) > self.pos.value(b, x) else 0.0
        for p, excusers in self.pays:
            x[p] = 0.0 if any(x[v] > 0.5 for v in excusers) else 1.0
        return x


def _topological(n: int, edges: set[tuple[int, int]]) -> list[int] | None:
    """A topological order of ``n`` nodes, ``None`` on a cycle (Kahn)."""
    out_edges: list[list[int]] = [[] for _ in range(n)]
    indeg = [0] * n
    for a, b in edges:
        out_edges[a].append(b)
        indeg[b] += 1
    ready = [k for k in range(n) if indeg[k] == 0]
    order = []
    while ready:
        k = ready.pop()
        order.append(k)
        for b in out_edges[k]:
            indeg[b] -= 1
            if indeg[b] == 0:
                ready.append(b)
    return order if len(order) == n else None

