"""What may share a block: the one decision every algorithm asks (issue 14, "one source of truth").

Two blocks may merge when no fuse-preventing edge joins them and no dependency path of
length >= 2 leads from one to the other (Lemma 1). The first half is decided here, by
:func:`fusion_conflict`, over a :class:`BlockSummary` of each block; the second is a
question about the partition graph, asked by
:meth:`fusionlab.analysis.wsp.PartitionState.merge_problem` after this one. The WSP graph's pair
question (:meth:`fusionlab.analysis.wsp.WSPGraph.forbidden`) is :func:`fusion_conflict` applied to
one-instruction blocks, and a block is fusible when folding its instructions one by one
never meets a conflict (:func:`first_conflict`). The partitioners' boolean inner loops
(``compatible``, ``first_compatible``) and the all-pairs masks (:func:`conflict_masks`)
are fast paths of it, checked against it by ``tests/test_merge_decision.py``.

The tests, in this order (the first that applies gives the reason):

1. **explicit edges**: a pair of instructions, one in each block, joined by a
   fuse-preventing edge the WSP graph derived once from the program (Def. 12's overlap,
   the reduction, scan, filter, gather, contraction, histogram and SYNC rules; each with its
   :class:`Conflict` and a detail). Of several such pairs, the one with the lowest
   instruction, then the lowest partner, answers, so the answer does not depend on which
   block is named first.
2. **opaque**: an opaque instruction runs alone: it shares a block with no instruction that
   computes (one with an iteration domain) and no other opaque one; DEL and SYNC fuse with it.
3. **shape**: computing instructions share a block only over equal iteration domains.

Examples
--------
>>> from fusionlab.ir.examples import fig3
>>> from fusionlab.analysis.wsp import WSPGraph
>>> g = WSPGraph(fig3())
>>> fusion_conflict(g, g.unit(0), g.unit(2))        # COPY A, 0 (4 elements) vs COPY D, 0 (5)
(<Conflict.SHAPE: 'different iteration shapes'>, '(4,) vs (5,)')
>>> fusion_conflict(g, g.unit(0) | g.unit(4), g.unit(9))[1]
'D[1:] overlaps D[:-1]'
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Protocol, Sequence

from fusionlab.support.budget import UNLIMITED, Budget

__all__ = ["Conflict", "IllegalMerge", "BlockSummary", "ExplicitEdges", "fusion_conflict", "first_conflict",
           "conflict_masks"]


class Conflict(enum.Enum):
    """Why two instructions may not share a block (a fuse-preventing edge)."""

    OVERLAP = "overlapping views that are not identical (Def. 12)"
    SHAPE = "different iteration shapes"
    OPAQUE = "an opaque instruction runs alone"
    CONTRACTION_PAIR = "two contractions do not share a loop nest (each is its own rnz nest, 003)"
    CONTRACTION_EPILOGUE = ("a contraction's kernel holds only element-wise instructions over its output "
                            "(its epilogue): no reduction, scan, filter, gather or generator")
    CONTRACTION_PRODUCER = ("computes an operand of a contraction, which reads each operand element many times: "
                            "fused, the producer would run once per use")
    CONTRACTION_OPERAND = ("writes an operand of a contraction, which reads it at every output position: the "
                           "operand must stay unchanged while the kernel runs")
    REDUCTION_RESULT = "reads the result of a reduction or scan that is not complete inside the kernel"
    FILTER_OUTPUT = ("uses a filter's output, which the filter's loop writes compacted: only a reduction of "
                     "the whole output fuses with its filter (filter-fold, 002)")
    SYNC_THEN_WRITE = "a SYNC hands over the base's contents before a later write (a kernel's syncs follow it)"
    SCAN_RESULT = "a scan depends on another scan's result (004 §4.2: a scanomap's carry is not known in its first pass)"
    SCAN_AXES = "scans along different axes (one loop nest has one sequential axis)"
    SCAN_FILTER = "a scan and a filter do not share a loop nest (each runs its own chunked passes)"
    SCAN_REDUCTION = "a scan and a reduction do not share a loop nest (no scan-reduce kernel: 004 §4.3 leaves it open)"
    GATHER_SOURCE = ("a gather reads its source at data-dependent positions: the source must be complete before "
                     "the kernel starts, so no instruction of the gather's kernel may write it")
    HISTOGRAM_COMPANION = ("a histogram (BINCOUNT) shares its kernel only with element-wise, generator and gather "
                           "instructions over its input and other histograms: each chunk counts into its own bins, "
                           "summed after the loop")


class IllegalMerge(enum.Enum):
    """Why merging two blocks is illegal (Lemma 1)."""

    FORBIDDEN = "a fuse-preventing edge joins the blocks"
    CYCLE = "a dependency path of length >= 2 joins the blocks; merging would make a cycle"
    SAME_BLOCK = "the two instructions are already in one block"


class ExplicitEdges(Protocol):
    """The fuse-preventing edges a WSP graph derived from its program, pair by pair."""

    explicit_mask: list[int]

    def explicit_reason(self, u: int, v: int) -> tuple[Conflict, str]:
        """The reason and detail of the explicit edge joining ``u`` and ``v``."""


@dataclass(frozen=True, slots=True)
class BlockSummary:
    """What :func:`fusion_conflict` needs of a block: four integers' worth.

    Attributes
    ----------
    members
        Bit mask of the block's instructions.
    domain
        The iteration domain of its computing instructions, ``None`` when it has none (only
        DEL, SYNC or an opaque instruction). Every computing instruction of a fusible block
        has this domain; of a block that is not, the first one's (in the order of ``|``).
    opaque
        Bit mask of its opaque instructions (a fusible block has at most one, alone with
        DEL and SYNC).
    explicit
        Bit mask of the instructions joined to one of its members by an explicit
        fuse-preventing edge.

    >>> a, b = BlockSummary(0b01, (4,), 0, 0b100), BlockSummary(0b10, None, 0, 0)
    >>> (a | b).members, (a | b).domain
    (3, (4,))
    """

    members: int
    domain: tuple[int, ...] | None
    opaque: int
    explicit: int

    def __or__(self, other: BlockSummary) -> BlockSummary:
        """The summary of the union of two blocks."""
        return BlockSummary(self.members | other.members, other.domain if self.domain is None else self.domain,
                            self.opaque | other.opaque, self.explicit | other.explicit)


class Summary(Protocol):
    """What :func:`fusion_conflict` reads of a block: :class:`BlockSummary`'s fields."""

    @property
    def members(self) -> int: ...

    @property
    def domain(self) -> tuple[int, ...] | None: ...

    @property
    def opaque(self) -> int: ...

    @property
    def explicit(self) -> int: ...


class _Union:
    """The running union of :func:`first_conflict`'s fold, updated in place as
    ``BlockSummary.__or__`` would build it (a fold over a block of thousands of instructions
    would otherwise build a summary per instruction)."""

    __slots__ = ("members", "domain", "opaque", "explicit")

    def __init__(self, first: BlockSummary) -> None:
        self.members, self.domain = first.members, first.domain
        self.opaque, self.explicit = first.opaque, first.explicit


def _lowest(mask: int) -> int:
    return (mask & -mask).bit_length() - 1


def fusion_conflict(edges: ExplicitEdges, a: Summary, b: Summary) -> tuple[Conflict, str] | None:
    """Why blocks ``a`` and ``b`` (disjoint) may not share a block, or ``None`` if they may.

    The one decision (module docstring: explicit edges, then opaque, then shape). For two
    blocks that are each fusible it answers ``None`` exactly when no pair of instructions,
    one from each, is forbidden, and otherwise a reason that such a pair has.

    >>> from fusionlab import parse
    >>> from fusionlab.analysis.wsp import WSPGraph
    >>> g = WSPGraph(parse('ARRAY a float64[4]\\nARRAY b float64[4]\\nCOPY a, 1\\n'
    ...                    'OPAQUE b, a, name="sort"\\nDEL a'))
    >>> fusion_conflict(g, g.unit(0), g.unit(1))
    (<Conflict.OPAQUE: 'an opaque instruction runs alone'>, 'instruction 2 is opaque')
    >>> fusion_conflict(g, g.unit(1), g.unit(2)) is None      # DEL fuses with anything
    True
    """
    hit = (a.explicit & b.members) | (b.explicit & a.members)
    if hit:
        x = _lowest(hit)
        y = _lowest(edges.explicit_mask[x] & (a.members if b.members >> x & 1 else b.members))
        return edges.explicit_reason(x, y)
    # an opaque instruction conflicts with a block that computes or holds another opaque one
    opaque = ((a.opaque if b.domain is not None or b.opaque else 0)
              | (b.opaque if a.domain is not None or a.opaque else 0))
    if opaque:
        return Conflict.OPAQUE, f"instruction {_lowest(opaque) + 1} is opaque"
    if a.domain is not None and b.domain is not None and a.domain != b.domain:
        return Conflict.SHAPE, f"{_shape(a.domain)} vs {_shape(b.domain)}"
    return None


def first_conflict(edges: ExplicitEdges, parts: Sequence[BlockSummary]) -> tuple[int, int, Conflict, str] | None:
    """Whether ``parts`` (disjoint blocks) may all share one block: ``None``, or ``(j, k,
    reason, detail)`` for the first ``k`` that conflicts with an earlier part ``j``.

    The parts are folded in order: each is tested against the union of those before it,
    which stays fusible until the first conflict, so the fold answers ``None`` exactly when
    :func:`fusion_conflict` allows every pair of parts.

    >>> from fusionlab.ir.examples import fig3
    >>> from fusionlab.analysis.wsp import WSPGraph
    >>> g = WSPGraph(fig3())
    >>> first_conflict(g, [g.unit(i) for i in (0, 4, 9)])[:3]
    (1, 2, <Conflict.OVERLAP: 'overlapping views that are not identical (Def. 12)'>)
    """
    if not parts:
        return None
    acc = _Union(parts[0])
    for k in range(1, len(parts)):
        s = parts[k]
        if fusion_conflict(edges, acc, s) is None:
            # the union grown in place: partition_problems folds every instruction of a partition
            acc.members |= s.members
            if acc.domain is None:
                acc.domain = s.domain
            acc.opaque |= s.opaque
            acc.explicit |= s.explicit
            continue
        # each rule that fires on the union fires on the part that brought its field in
        # (the explicit mask, the opaque mask, the first domain), so a witness exists
        for j in range(k):
            got = fusion_conflict(edges, parts[j], s)
            if got is not None:
                return j, k, got[0], got[1]
        raise AssertionError("a conflict with the union but with no part")
    return None


def conflict_masks(parts: Sequence[BlockSummary], budget: Budget | None = None,
                   phase: str = "fusion rule") -> list[int]:
    """Per part, the bit mask of the parts (by position) it may not share a block with:
    :func:`fusion_conflict` for every pair at once, from the shapes, opaque masks and
    explicit masks (instructions outside the parts are ignored), without a pairwise loop.
    ``budget`` is checked once per part, naming ``phase``.

    >>> from fusionlab.ir.examples import fig3
    >>> from fusionlab.analysis.wsp import WSPGraph
    >>> g = WSPGraph(fig3())
    >>> [bin(m) for m in conflict_masks([g.unit(0), g.unit(2), g.unit(4)])]
    ['0b10', '0b101', '0b10']
    """
    budget = UNLIMITED if budget is None else budget
    singletons = all(p.members == 1 << k for k, p in enumerate(parts))
    pos: dict[int, int] = {}
    if not singletons:
        for k, p in enumerate(parts):
            m = p.members
            while m:
                low = m & -m
                pos[low.bit_length() - 1] = k
                m ^= low
    by_shape: dict[tuple[int, ...], int] = {}
    shaped = opaque = 0
    for k, p in enumerate(parts):
        if p.domain is not None:
            by_shape[p.domain] = by_shape.get(p.domain, 0) | 1 << k
            shaped |= 1 << k
        if p.opaque:
            opaque |= 1 << k
    everyone = (1 << len(parts)) - 1
    out = []
    for k, p in enumerate(parts):
        budget.check(phase)
        mask = shaped & ~by_shape[p.domain] if p.domain is not None else 0
        if singletons:  # instruction k is part k: the explicit mask is already by position
            mask |= p.explicit & everyone
        else:
            m = p.explicit
            while m:
                low = m & -m
                at = pos.get(low.bit_length() - 1)
                if at is not None:
                    mask |= 1 << at
                m ^= low
        if p.opaque:
            mask |= shaped | opaque
        elif p.domain is not None:
            mask |= opaque
        out.append(mask & ~(1 << k))
    return out


def _shape(shape: tuple[int, ...]) -> str:
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"
