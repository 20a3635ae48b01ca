"""Cost models of a partition: Bohrium (Def. 13), Max Contract (Def. 19), Max Locality
(Def. 20), Robinson (Def. 21), and the user's own.

Every built-in model is *additive*: the cost of a partition is the sum of a cost per
block, so the saving of a merge (Prop. 1) depends only on the two blocks. The algorithms
talk to a model through an :class:`Evaluator` bound to one WSP graph, which caches block
summaries by block (a bit mask of instructions).

A user's model is either a subclass of :class:`BlockCostModel` (implement
``block_cost(info)``) or any object with a ``name`` and ``cost(partition)``; the
algorithms first run :func:`check_monotonic` on it and refuse it with the counterexample
when merging can raise its cost (Def. 6).

Examples
--------
>>> from fusionlab.ir.examples import fig3
>>> p = fig3()
>>> singletons = [[i] for i in range(len(p))]
>>> get_cost_model("bohrium", unit="elements").cost(p, singletons)
94
>>> get_cost_model("bohrium").cost(p, singletons)     # bytes: 94 float64 elements
752
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Protocol, Sequence, runtime_checkable

from fusionlab.ir.bytecode import OpFamily, Opcode, Program, View
from fusionlab.analysis.wsp import WSPGraph

__all__ = [
    "Partition",
    "cost_label",
    "LOWER_IS_BETTER",
    "BlockInfo",
    "block_info",
    "CostModel",
    "AdditiveCostModel",
    "BlockCostModel",
    "Bohrium",
    "MaxContract",
    "MaxLocality",
    "Robinson",
    "Evaluator",
    "COST_MODELS",
    "MODEL_NAMES",
    "UnsupportedCostModel",
    "get_cost_model",
    "access_info",
    "graph_accesses",
    "check_monotonic",
    "MonotonicityViolation",
    "NonMonotonicCostModel",
]


@dataclass(frozen=True)
class Partition:
    """A partition of a program's instructions: ``blocks`` of 0-based instruction indices."""

    program: Program
    blocks: tuple[tuple[int, ...], ...]

    def numbered(self) -> list[list[int]]:
        """The blocks with 1-based instruction numbers, as listings show them."""
        return [[i + 1 for i in b] for b in self.blocks]


@dataclass(frozen=True)
class BlockInfo:
    """What a block accesses (Def. 10); DEL and SYNC count as neither reading nor writing.

    ``reads`` and ``writes`` are the distinct views; ``new`` the bases first written in the
    block; ``deleted`` the bases the block DELs; ``synced`` the bases the program SYNCs
    anywhere.
    """

    instructions: tuple[int, ...]
    reads: frozenset[View]
    writes: frozenset[View]
    new: frozenset[str]
    deleted: frozenset[str]
    synced: frozenset[str]

    @property
    def external_reads(self) -> frozenset[View]:
        """``in[B] \\ new[B]``: views read whose base the block does not create."""
        return frozenset(v for v in self.reads if v.base.name not in self.new)

    @property
    def external_writes(self) -> frozenset[View]:
        """``out[B] \\ del[B]``: views written whose base is not freed here, or is synced."""
        return frozenset(
            v for v in self.writes if v.base.name not in self.deleted or v.base.name in self.synced
        )

    @property
    def contracted(self) -> frozenset[str]:
        """Bases created and freed in the block and never synced (array contraction)."""
        return (self.new & self.deleted) - self.synced


@dataclass(frozen=True)
class _Access:
    reads: frozenset[View]
    writes: frozenset[View]
    new: frozenset[str]
    deleted: frozenset[str]


def access_info(program: Program) -> tuple[list[_Access], frozenset[str]]:
    """Per instruction its reads, writes, new and deleted bases; and the synced bases.

    A base is *new* at the instruction that first accesses it, when that access is a
    write and not also a read (an array read before it is written holds input data).
    """
    seen: set[str] = set()
    out: list[_Access] = []
    synced: set[str] = set()
    for ins in program:
        if ins.opcode in OpFamily.SYSTEM:
            name = (ins.outputs + ins.views_in)[0].base.name
            if ins.opcode is Opcode.SYNC:
                synced.add(name)
            out.append(_Access(frozenset(), frozenset(),
                               frozenset(), frozenset({name}) if ins.opcode is Opcode.DEL else frozenset()))
            seen.add(name)
            continue
        reads = frozenset(ins.views_in)
        writes = frozenset(ins.outputs)
        read_bases = {v.base.name for v in reads}
        new = frozenset(v.base.name for v in writes if v.base.name not in seen and v.base.name not in read_bases)
        seen |= read_bases | {v.base.name for v in writes}
        out.append(_Access(reads, writes, new, frozenset()))
    return out, frozenset(synced)


def graph_accesses(graph: WSPGraph) -> tuple[list[_Access], frozenset[str]]:
    """:func:`access_info` of the graph's program, computed once per graph (every cost
    model and index bound to the graph shares it).

    >>> from fusionlab.ir.examples import fig3
    >>> g = WSPGraph(fig3())
    >>> graph_accesses(g) is graph_accesses(g)
    True
    """
    got = graph.derived.get("access_info")
    if got is None:
        got = graph.derived["access_info"] = access_info(graph.program)
    return got  # type: ignore[return-value]


def block_info(program: Program, block: Iterable[int], accesses: Sequence[_Access] | None = None,
               synced: frozenset[str] | None = None) -> BlockInfo:
    """What ``block`` (0-based instruction indices) of ``program`` accesses (Def. 10).

    >>> from fusionlab.ir.examples import fig3
    >>> sorted(block_info(fig3(), range(17)).contracted)  # all of Fig. 3 in one block
    ['A', 'B', 'E', 'T']
    """
    if accesses is None or synced is None:
        accesses, synced = access_info(program)
    members = tuple(sorted(block))
    reads: set[View] = set()
    writes: set[View] = set()
    new: set[str] = set()
    deleted: set[str] = set()
    for i in members:
        a = accesses[i]
        reads |= a.reads
        writes |= a.writes
        new |= a.new
        deleted |= a.deleted
    return BlockInfo(members, frozenset(reads), frozenset(writes), frozenset(new), frozenset(deleted), synced)


# --------------------------------------------------------------------------- protocol


@runtime_checkable
class CostModel(Protocol):
    """What the algorithms need of a cost model: a ``name`` and ``cost(partition)``.

    Optional attributes: ``pairwise`` (True when a positive saving between two unions of
    blocks always shows as a positive saving between two of their blocks: lets
    ``unintrusive`` and ``optimal`` prune safely), ``merge_bonus`` (a saving every merge
    gets whatever it joins) and ``unit``.
    """

    name: str

    def cost(self, partition: Partition) -> float: ...


class AdditiveCostModel:
    """A model whose cost is a sum over blocks, computed from mergeable block summaries.

    Subclasses implement :meth:`prepare`, :meth:`summary`, :meth:`combine` and
    :meth:`value`.
    """

    name = "additive"
    unit = ""
    pairwise = False
    merge_bonus: float = 0
    #: True when (1) two blocks save other than exactly ``merge_bonus`` only if they access an
    #: identical view, or one creates or frees (DEL) a base the other accesses, and (2) a
    #: block ``x`` with none of these relations to ``y`` leaves ``y``'s saving with ``b``
    #: unchanged when merged into ``b``. The algorithms then look for savings through
    #: shared views instead of all pairs, and update savings incrementally.
    sparse_savings = False

    def prepare(self, graph: WSPGraph) -> Any:
        """Per-graph data the other methods share."""
        acc, synced = graph_accesses(graph)
        return {"graph": graph, "acc": acc, "synced": synced}

    def summary(self, ctx: Any, i: int) -> Any:
        """The summary of the block ``{i}``."""
        raise NotImplementedError

    def combine(self, ctx: Any, a: Any, b: Any) -> Any:
        """The summary of the union of two disjoint blocks."""
        raise NotImplementedError

    def value(self, ctx: Any, s: Any) -> float:
        """The cost of a block from its summary."""
        raise NotImplementedError

    def absorb(self, ctx: Any, big: Any, small: Any) -> Any:
        """The summary of the union of two disjoint blocks, where the caller gives ``big``
        up: a model may change it in place, so a block that absorbs many small ones costs
        their size each time, not its own. By default :meth:`combine`."""
        return self.combine(ctx, big, small)

    def evaluator(self, graph: WSPGraph) -> "Evaluator":
        """An :class:`Evaluator` bound to ``graph``."""
        return Evaluator(self, graph)

    def cost(self, program_or_partition: Program | Partition, blocks: Iterable[Iterable[int]] | None = None) -> float:
        """The cost of a partition: ``model.cost(program, blocks)`` or ``model.cost(partition)``."""
        if isinstance(program_or_partition, Partition):
            program, blocks = program_or_partition.program, program_or_partition.blocks
        else:
            program = program_or_partition
        if blocks is None:
            raise TypeError("give the blocks: model.cost(program, [[0, 1], [2]]) or model.cost(partition)")
        return self.evaluator(WSPGraph(program)).cost(blocks)

    def cache_key(self) -> tuple[Any, ...]:
        """What identifies this model's results in the merge cache."""
        return (self.name, self.unit)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


#: Summaries an :class:`Evaluator` keeps by the identity of their masks (a cache of its
#: cache: each entry keeps its mask, up to kilobytes, alive)
RECENT_SUMMARIES = 4096


class Evaluator:
    """A cost model bound to one WSP graph, with cached block costs.

    Blocks are bit masks of instruction indices (``1 << i`` for instruction ``i``).
    """

    def __init__(self, model: Any, graph: WSPGraph) -> None:
        self.model, self.graph = model, graph
        self.additive = isinstance(model, AdditiveCostModel)
        self.pairwise = bool(getattr(model, "pairwise", False))
        self.merge_bonus = float(getattr(model, "merge_bonus", 0))
        self.evaluations = 0
        self._summaries: dict[int, Any] = {}
        # the summaries last asked for, by the identity of their mask: hashing a mask costs
        # its length (a block of a 60,000-instruction batch: a few microseconds), and the
        # greedy loop asks for the same mask objects over and over (``PartitionState.members``);
        # ``_holders`` lists, by summary, the entries to forget when it is consumed
        self._recent: dict[int, tuple[int, Any]] = {}
        self._holders: dict[int, list[int]] = {}
        self._values: dict[int, float] = {}
        if self.additive:
            self._ctx = model.prepare(graph)

    def _summary(self, mask: int) -> Any:
        recent = self._recent.get(id(mask))
        if recent is not None and recent[0] is mask:   # the entry holds the mask: its id is not reused
            return recent[1]
        got = self._summaries.get(mask)
        if got is None:
            got = self._summaries[mask] = self._built(mask)
        if len(self._recent) >= RECENT_SUMMARIES:   # the entries keep their masks alive
            self._recent.clear()
            self._holders.clear()
        self._recent[id(mask)] = (mask, got)
        self._holders.setdefault(id(got), []).append(id(mask))
        return got

    def _built(self, mask: int) -> Any:
        """The summary of block ``mask`` from its instructions' summaries."""
        # a model that absorbs in place takes the instructions one by one; any other
        # combines them as a balanced tree: a summary that copies its parts costs
        # n log n for a block of n instructions, not n squared
        m, rest = self.model, mask
        parts = []
        while rest:
            low = rest & -rest
            rest ^= low
            parts.append(m.summary(self._ctx, low.bit_length() - 1))
        if type(m).absorb is not AdditiveCostModel.absorb:
            # the parts are fresh: absorb them one by one into the first, in place
            got = parts[0]
            for one in parts[1:]:
                got = m.absorb(self._ctx, got, one)
            return got
        while len(parts) > 1:
            parts = [m.combine(self._ctx, parts[k], parts[k + 1]) if k + 1 < len(parts) else parts[k]
                     for k in range(0, len(parts), 2)]
        return parts[0]

    def union_cost(self, parts: Sequence[int]) -> float:
        """The cost of the block made of disjoint ``parts`` (masks), reusing their summaries."""
        mask = 0
        for p in parts:
            mask |= p
        if mask not in self._summaries:
            got = self._summary(parts[0])
            for p in parts[1:]:
                got = self.model.combine(self._ctx, got, self._summary(p))
            self._summaries[mask] = got
        return self.block_cost(mask)

    def block_cost(self, mask: int) -> float:
        """The cost of one block (additive models only)."""
        got = self._values.get(mask)
        if got is None:
            self.evaluations += 1
            got = self._values[mask] = self.model.value(self._ctx, self._summary(mask))
        return got

    def merged_cost(self, m1: int, m2: int) -> float:
        """The cost of the block ``m1 | m2``, reusing the two blocks' summaries."""
        mask = m1 | m2
        if mask not in self._summaries:
            self._summaries[mask] = self.model.combine(self._ctx, self._summary(m1), self._summary(m2))
        return self.block_cost(mask)

    def cost(self, blocks: Iterable[Iterable[int]]) -> float:
        """The cost of a partition given as blocks of instruction indices."""
        masks = [sum(1 << i for i in b) for b in blocks]
        return self.cost_masks(masks)

    def cost_masks(self, masks: Iterable[int]) -> float:
        """The cost of a partition given as bit masks."""
        masks = list(masks)
        if self.additive:
            return sum(self.block_cost(m) for m in masks)
        self.evaluations += 1
        blocks = tuple(sorted(tuple(i for i in range(self.graph.n) if m >> i & 1) for m in masks))
        return self.model.cost(Partition(self.graph.program, blocks))

    def merged(self, m1: int, m2: int, *, consume: bool = False) -> int:
        """Note that blocks ``m1`` and ``m2`` merged: the union's summary is built from
        theirs (cheaper than from its instructions). Returns the union's mask.

        With ``consume`` the summary of ``m1`` (the larger block) is given up and may be
        reused for the union (:meth:`AdditiveCostModel.absorb`); it is made again from the
        instructions if ``m1`` is asked for later."""
        mask = m1 | m2
        if self.additive and mask not in self._summaries:
            if consume:
                big = self._summary(m1)
                small = self._summary(m2)
                del self._summaries[m1]
                for held in self._holders.pop(id(big), ()):   # it changes in place below
                    self._recent.pop(held, None)
                self._summaries[mask] = self.model.absorb(self._ctx, big, small)
            else:
                self._summaries[mask] = self.model.combine(self._ctx, self._summary(m1), self._summary(m2))
        return mask

    def saving(self, m1: int, m2: int, others: Sequence[int] = ()) -> float:
        """``cost(P) - cost(P / (B1, B2))`` (Def. 15); ``others`` are the other blocks of P,
        needed only by models that are not additive."""
        if self.additive:
            fast = getattr(self.model, "pair_saving", None)
            if fast is not None:
                self.evaluations += 1
                return fast(self._ctx, self._summary(m1), self._summary(m2))
            return self.block_cost(m1) + self.block_cost(m2) - self.merged_cost(m1, m2)
        rest = list(others)
        return self.cost_masks(rest + [m1, m2]) - self.cost_masks(rest + [m1 | m2])


# --------------------------------------------------------------------------- built-ins


class Bohrium(AdditiveCostModel):
    """Def. 13: the bytes (or elements) each block reads and writes outside itself.

    Per block: the distinct views read whose base the block does not create, plus the
    distinct views written whose base the block does not free (or that the program syncs).

    >>> from fusionlab.ir.examples import fig3
    >>> optimum = [[0, 1, 4, 5, 6, 7, 8, 11, 12], [2, 3], [9, 10, 13, 14, 15, 16]]
    >>> Bohrium(unit="elements").cost(fig3(), optimum)     # the paper's Fig. 12
    38
    """

    name = "bohrium"
    pairwise = True
    sparse_savings = True

    def __init__(self, unit: str = "bytes") -> None:
        if unit not in ("bytes", "elements"):
            raise ValueError("unit must be 'bytes' or 'elements'")
        self.unit = unit

    # A summary is (reads, writes, new, freed): reads and writes map a base name to
    # (its views, their total size), so a saving looks up shared bases from the smaller
    # side; freed holds the bases deleted in the block and never synced.
    def summary(self, ctx: Any, i: int) -> Any:
        a = ctx["acc"][i]
        return (self._by_base(a.reads), self._by_base(a.writes), a.new, a.deleted - ctx["synced"])

    def combine(self, ctx: Any, a: Any, b: Any) -> Any:
        return (self._union(a[0], b[0]), self._union(a[1], b[1]), a[2] | b[2], a[3] | b[3])

    def absorb(self, ctx: Any, big: Any, small: Any) -> Any:
        # big's dicts are its own (every summary builds fresh ones); its base sets become
        # plain sets owned by the result
        reads, writes, new, freed = big
        self._add(reads, small[0])
        self._add(writes, small[1])
        new = new if isinstance(new, set) else set(new)
        freed = freed if isinstance(freed, set) else set(freed)
        new |= small[2]
        freed |= small[3]
        return reads, writes, new, freed

    def value(self, ctx: Any, s: Any) -> float:
        reads, writes, new, freed = s
        total = sum(sz for base, (_, sz) in reads.items() if base not in new)
        total += sum(sz for base, (_, sz) in writes.items() if base not in freed)
        return total

    def pair_saving(self, ctx: Any, a: Any, b: Any) -> float:
        """Prop. 1 from the two summaries, in time proportional to the smaller block:
        views both blocks access externally in one direction count once, a read of a base
        the other block creates and a write of a base the other block frees cost nothing."""
        size = self._size
        total = 0
        for k, skip in ((0, 2), (1, 3)):  # reads against new, writes against freed
            if len(a[k]) <= len(b[k]):
                xs, ys, xskip, yskip = a[k], b[k], a[skip], b[skip]
            else:
                xs, ys, xskip, yskip = b[k], a[k], b[skip], a[skip]
            for base, (vs, sz) in xs.items():
                if base in yskip:
                    total += sz  # x reads (writes) a base y creates (frees)
                    continue
                other = ys.get(base)
                if other is not None and base not in xskip:
                    ovs = other[0]
                    if vs is ovs or vs == ovs:
                        total += sz
                    else:
                        total += sum(size(v) for v in vs if v in ovs)
            if xskip:  # y reads (writes) a base x creates (frees)
                if len(xskip) <= len(ys):
                    total += sum(ys[base][1] for base in xskip if base in ys)
                else:
                    total += sum(sz for base, (_, sz) in ys.items() if base in xskip)
        return total

    def _by_base(self, views: frozenset[View]) -> dict[str, tuple[frozenset[View], int]]:
        out: dict[str, set[View]] = {}
        for v in views:
            out.setdefault(v.base.name, set()).add(v)
        return {k: (frozenset(x), sum(self._size(v) for v in x)) for k, x in out.items()}

    def _union(self, a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
        if len(a) < len(b):
            a, b = b, a
        out = dict(a)
        for k, (vs, sz) in b.items():
            if k in out:
                big, bsz = out[k]
                if vs is big or vs == big:
                    continue
                # the union's size from the smaller side: a base viewed a thousand times
                # over costs its new views, not all of them, at each merge
                small, big = (vs, big) if len(vs) <= len(big) else (big, vs)
                out[k] = (big | small, sz + bsz - sum(self._size(v) for v in small if v in big))
            else:
                out[k] = (vs, sz)
        return out

    def _add(self, out: dict[str, Any], b: dict[str, Any]) -> None:
        """:meth:`_union` into ``out`` in place."""
        for k, (vs, sz) in b.items():
            got = out.get(k)
            if got is None:
                out[k] = (vs, sz)
                continue
            big, bsz = got
            if vs is big or vs == big:
                continue
            small, big = (vs, big) if len(vs) <= len(big) else (big, vs)
            out[k] = (big | small, sz + bsz - sum(self._size(v) for v in small if v in big))

    def _size(self, v: View) -> int:
        return v.nbytes if self.unit == "bytes" else v.size

    def __repr__(self) -> str:
        return f"Bohrium(unit={self.unit!r})"


class MaxContract(AdditiveCostModel):
    """Def. 19: the number of arrays created and not contracted.

    An array is contracted when the block that creates it also frees it and the program
    never syncs it.

    >>> from fusionlab.ir.examples import fig3
    >>> MaxContract().cost(fig3(), [[i] for i in range(17)])
    5
    """

    name = "max_contract"
    unit = "arrays"
    #: what the cost counts, as every view says it (lower is better, as for every model)
    counts = "arrays not contracted"
    pairwise = True
    sparse_savings = True

    def summary(self, ctx: Any, i: int) -> Any:
        a = ctx["acc"][i]
        return (a.new, a.deleted)

    def combine(self, ctx: Any, a: Any, b: Any) -> Any:
        return (a[0] | b[0], a[1] | b[1])

    def absorb(self, ctx: Any, big: Any, small: Any) -> Any:
        new = big[0] if isinstance(big[0], set) else set(big[0])
        deleted = big[1] if isinstance(big[1], set) else set(big[1])
        new |= small[0]
        deleted |= small[1]
        return new, deleted

    def value(self, ctx: Any, s: Any) -> float:
        new, deleted = s
        return len(new) - len((new & deleted) - ctx["synced"])

    def pair_saving(self, ctx: Any, a: Any, b: Any) -> float:
        """``value(a) + value(b) - value(combine(a, b))`` without building the union, in
        time proportional to the smaller block: only a base both blocks create or free
        counts differently in the union.

        >>> from fusionlab import parse
        >>> p = parse("ARRAY x float64[4]\\nARRAY y float64[4]\\nCOPY x, 1\\nADD y, x, 1\\nDEL x\\nSYNC y")
        >>> ev = MaxContract().evaluator(WSPGraph(p))
        >>> ev.saving(1, 4), ev.block_cost(1) + ev.block_cost(4) - ev.block_cost(5)   # x contracted
        (1, 1)
        """
        small, big = (a, b) if len(a[0]) + len(a[1]) <= len(b[0]) + len(b[1]) else (b, a)
        synced = ctx["synced"]
        total = 0
        for x in set(small[0]) | set(small[1]):
            in_new, in_del = (x in small[0], x in big[0]), (x in small[1], x in big[1])
            if not (in_new[1] or in_del[1]):
                continue  # only the smaller block has it: counts as it did
            union_new, union_del = in_new[0] or in_new[1], in_del[0] or in_del[1]
            total += in_new[0] + in_new[1] - union_new
            if x not in synced:
                total -= (in_new[0] and in_del[0]) + (in_new[1] and in_del[1]) - (union_new and union_del)
        return total


class MaxLocality(AdditiveCostModel):
    """Def. 20: each pair of identical array accesses in different blocks costs 1.

    ``w(f, f') = |ext[f] ∩ io[f']|``, summed over ``f`` in a block and ``f'`` outside it.

    >>> from fusionlab.ir.examples import fig3
    >>> MaxLocality().cost(fig3(), [range(17)])
    0
    """

    name = "max_locality"
    unit = "accesses"
    #: what the cost counts, as every view says it
    counts = "accesses repeated in another block"
    pairwise = True
    sparse_savings = True

    def prepare(self, graph: WSPGraph) -> Any:
        ctx = super().prepare(graph)
        acc = ctx["acc"]
        ext: list[list[View]] = []
        io: list[frozenset[View]] = []
        for a in acc:
            ext.append([v for v in a.reads if v.base.name not in a.new]
                       + [v for v in a.writes if v.base.name not in a.deleted or v.base.name in ctx["synced"]])
            io.append(a.reads | a.writes)
        by_view: dict[View, list[int]] = {}
        for i, views in enumerate(io):
            for v in views:
                by_view.setdefault(v, []).append(i)
        # weights w[f][f'] = |ext[f] ∩ io[f']| for f != f', sparse
        w: list[dict[int, int]] = [dict() for _ in acc]
        for f, views in enumerate(ext):
            for v in views:
                for g in by_view.get(v, ()):
                    if g != f:
                        w[f][g] = w[f].get(g, 0) + 1
        sym: list[dict[int, int]] = [dict() for _ in acc]
        for f in range(len(acc)):
            for g, x in w[f].items():
                sym[f][g] = sym[f].get(g, 0) + x
                sym[g][f] = sym[g].get(f, 0) + x
        ctx["w"] = w
        ctx["sym"] = sym
        ctx["total"] = [sum(d.values()) for d in w]
        return ctx

    def summary(self, ctx: Any, i: int) -> Any:
        # (members mask, smaller member list, sum of outgoing weights, internal weight)
        return (1 << i, (i,), ctx["total"][i], 0)

    def combine(self, ctx: Any, a: Any, b: Any) -> Any:
        small, big = (a, b) if len(a[1]) <= len(b[1]) else (b, a)
        cross = self._cross(ctx, small[1], big[0])
        return (a[0] | b[0], (*a[1], *b[1]), a[2] + b[2], a[3] + b[3] + cross)

    @staticmethod
    def _cross(ctx: Any, members: Any, mask: int) -> int:
        """The weight of the edges between ``members`` and the instructions in ``mask``."""
        cross = 0
        for f in members:
            for g, x in ctx["sym"][f].items():
                if mask >> g & 1:
                    cross += x
        return cross

    def absorb(self, ctx: Any, big: Any, small: Any) -> Any:
        if len(small[1]) > len(big[1]):
            return self.combine(ctx, big, small)
        cross = self._cross(ctx, small[1], big[0])
        members = big[1] if isinstance(big[1], list) else list(big[1])
        members.extend(small[1])
        return (big[0] | small[0], members, big[2] + small[2], big[3] + small[3] + cross)

    def value(self, ctx: Any, s: Any) -> float:
        return s[2] - s[3]

    def pair_saving(self, ctx: Any, a: Any, b: Any) -> float:
        """``value(a) + value(b) - value(combine(a, b))``: the weight between the two
        blocks, which merging makes internal; from the smaller block's members."""
        small, big = (a, b) if len(a[1]) <= len(b[1]) else (b, a)
        sym = ctx["sym"]
        # through the small block's weights, or pair by pair when that is fewer lookups (an
        # instruction reading a view that a hundred others read has hundreds of weights)
        if len(small[1]) * len(big[1]) < sum(len(sym[f]) for f in small[1]):
            return sum(sym[f].get(g, 0) for f in small[1] for g in big[1])
        cross = 0
        mask = big[0]
        for f in small[1]:
            for g, x in sym[f].items():
                if mask >> g & 1:
                    cross += x
        return cross


class Robinson(AdditiveCostModel):
    """Def. 21: ``|P| + N * MaxContract + N**2 * MaxLocality``, N the number of arrays accessed.

    >>> from fusionlab.ir.examples import fig3
    >>> Robinson().cost(fig3(), [[i] for i in range(17)]) == 17 + 5 * 5 + 25 * MaxLocality().cost(fig3(), [[i] for i in range(17)])
    True
    """

    name = "robinson"
    unit = "score"
    #: what the cost counts, as every view says it
    counts = "Robinson score"
    pairwise = True
    merge_bonus = 1
    sparse_savings = True

    def __init__(self) -> None:
        self._contract, self._locality = MaxContract(), MaxLocality()

    def prepare(self, graph: WSPGraph) -> Any:
        ctx = self._locality.prepare(graph)
        ctx["N"] = len({v.base.name for ins in graph.program for v in ins.reads() + ins.writes()})
        return ctx

    def summary(self, ctx: Any, i: int) -> Any:
        return (self._contract.summary(ctx, i), self._locality.summary(ctx, i))

    def combine(self, ctx: Any, a: Any, b: Any) -> Any:
        return (self._contract.combine(ctx, a[0], b[0]), self._locality.combine(ctx, a[1], b[1]))

    def absorb(self, ctx: Any, big: Any, small: Any) -> Any:
        return (self._contract.absorb(ctx, big[0], small[0]), self._locality.absorb(ctx, big[1], small[1]))

    def value(self, ctx: Any, s: Any) -> float:
        n = ctx["N"]
        return 1 + n * self._contract.value(ctx, s[0]) + n * n * self._locality.value(ctx, s[1])

    def pair_saving(self, ctx: Any, a: Any, b: Any) -> float:
        """``value(a) + value(b) - value(combine(a, b))`` from the parts' own savings (one
        block fewer, contractions, locality), in time proportional to the smaller block:
        the greedy loop prices every pair (the merge bonus) without building their unions.

        >>> from fusionlab.ir.examples import fig3
        >>> ev = Robinson().evaluator(WSPGraph(fig3()))
        >>> ev.saving(1, 1 << 4) == ev.block_cost(1) + ev.block_cost(1 << 4) - ev.block_cost(1 | 1 << 4)
        True
        """
        n = ctx["N"]
        return (1 + n * self._contract.pair_saving(ctx, a[0], b[0])
                + n * n * self._locality.pair_saving(ctx, a[1], b[1]))


class BlockCostModel(AdditiveCostModel):
    """Base class for a user's additive model: implement ``block_cost(info: BlockInfo)``.

    >>> class WritesTwice(BlockCostModel):
    ...     name = "writes_twice"
    ...     def block_cost(self, info):
    ...         return sum(v.size for v in info.external_reads) + 2 * sum(v.size for v in info.external_writes)
    >>> from fusionlab.ir.examples import fig3
    >>> WritesTwice().cost(fig3(), [[i] for i in range(17)])
    140
    """

    name = "user"
    unit = ""

    def block_cost(self, info: BlockInfo) -> float:
        """The cost of one block."""
        raise NotImplementedError("implement block_cost(info) in your subclass")

    def summary(self, ctx: Any, i: int) -> Any:
        a = ctx["acc"][i]
        return ((i,), a.reads, a.writes, a.new, a.deleted)

    def combine(self, ctx: Any, a: Any, b: Any) -> Any:
        return (tuple(sorted(a[0] + b[0])),) + tuple(x | y for x, y in zip(a[1:], b[1:]))

    def value(self, ctx: Any, s: Any) -> float:
        return self.block_cost(BlockInfo(s[0], s[1], s[2], s[3], s[4], ctx["synced"]))

    def cache_key(self) -> tuple[Any, ...]:
        return (type(self).__module__, type(self).__qualname__, id(self))


COST_MODELS: dict[str, Callable[..., Any]] = {
    "bohrium": Bohrium,
    "max_contract": MaxContract,
    "max_locality": MaxLocality,
    "robinson": Robinson,
}
# every name get_cost_model accepts: the paper's four and the time model (fusionlab.costs.timemodel,
# which imports this module, so it is looked up by name there)
MODEL_NAMES: tuple[str, ...] = (*COST_MODELS, "time")


def get_cost_model(model: Any = "bohrium", **options: Any) -> Any:
    """A cost model by name (``bohrium``, ``max_contract``, ``max_locality``, ``robinson``,
    ``time``: :class:`fusionlab.costs.timemodel.TimeModel`), or ``model`` itself when it already is one.

    >>> get_cost_model("max_locality").name
    'max_locality'
    >>> get_cost_model("time").unit
    'seconds'
    >>> get_cost_model("fastest")
    Traceback (most recent call last):
    ...
    ValueError: unknown cost model 'fastest'; choose one of bohrium, max_contract, max_locality, robinson, time, or pass an object with cost(partition)
    """
    if isinstance(model, str):
        key = model.lower().replace("-", "_").replace(" ", "_")
        if key == "time":   # fusionlab.costs.timemodel imports this module, so it is looked up here
            from fusionlab.costs.timemodel import TimeModel

            return TimeModel(**options)
        if key not in COST_MODELS:
            raise ValueError(
                f"unknown cost model {model!r}; choose one of {', '.join(COST_MODELS)}, time, "
                "or pass an object with cost(partition)"
            )
        return COST_MODELS[key](**options)
    if isinstance(model, AdditiveCostModel) or isinstance(model, CostModel):
        return model
    raise TypeError(f"{model!r} is not a cost model: it needs a name and cost(partition)")


# --------------------------------------------------------------------------- monotonicity


@dataclass(frozen=True)
class MonotonicityViolation:
    """A counterexample to Def. 6: merging ``merged`` in ``before`` raised the cost
    (or a cost was negative)."""

    before: tuple[tuple[int, ...], ...]
    merged: tuple[tuple[int, ...], tuple[int, ...]]
    cost_before: float
    cost_after: float

    def __str__(self) -> str:
        def nb(b: Sequence[int]) -> str:
            return "{" + ",".join(str(i + 1) for i in b) + "}"

        if self.cost_after < 0 or self.cost_before < 0:
            return f"a negative cost ({min(self.cost_before, self.cost_after)}) for {' '.join(map(nb, self.before))}"
        return (
            f"merging {nb(self.merged[0])} and {nb(self.merged[1])} raises the cost from "
            f"{self.cost_before:g} to {self.cost_after:g} (partition {' '.join(map(nb, self.before))})"
        )


class NonMonotonicCostModel(ValueError):
    """Raised by the algorithms for a model that breaks Def. 6; ``violation`` says where."""

    def __init__(self, model: Any, violation: MonotonicityViolation) -> None:
        self.violation = violation
        super().__init__(
            f"cost model {getattr(model, 'name', model)!r} is not monotone (Def. 6): {violation}. "
            "Fusing two blocks must never raise the cost."
        )


class UnsupportedCostModel(ValueError):
    """Raised by an algorithm that cannot take a (monotone) model, e.g. the ILP, whose
    objective is linear in the built-in models only; the message names what can."""


def _set_partitions(n: int) -> Iterable[list[list[int]]]:
    """All set partitions of range(n) (restricted growth strings)."""
    if n == 0:
        yield []
        return
    for rest in _set_partitions(n - 1):
        for k in range(len(rest)):
            yield [b + [n - 1] if j == k else b for j, b in enumerate(rest)]
        yield rest + [[n - 1]]


def check_monotonic(
    model: Any, program: Program, trials: int = 300, seed: int = 0, exhaustive_limit: int = 7
) -> MonotonicityViolation | None:
    """Search for a counterexample to Def. 6 (non-negative, and merging never raises cost).

    Programs of at most ``exhaustive_limit`` instructions are checked on every partition
    and every merge; larger ones on ``trials`` random partitions and merges.

    >>> from fusionlab.ir.examples import fig3
    >>> check_monotonic(get_cost_model("bohrium"), fig3()) is None
    True
    >>> class FewerBlocksCostMore:
    ...     name = "bad"
    ...     def cost(self, partition):
    ...         return 100 - len(partition.blocks)
    >>> print(check_monotonic(FewerBlocksCostMore(), fig3()))
    merging {...} and {...} raises the cost from ... to ... (partition ...)
    """
    graph = WSPGraph(program)
    ev = Evaluator(get_cost_model(model), graph)
    n = graph.n
    rng = random.Random(seed)

    def test(blocks: list[list[int]], a: int, b: int) -> MonotonicityViolation | None:
        masks = [sum(1 << i for i in blk) for blk in blocks]
        before = ev.cost_masks(masks)
        merged = [m for j, m in enumerate(masks) if j not in (a, b)] + [masks[a] | masks[b]]
        after = ev.cost_masks(merged)
        if after > before + 1e-9 * max(1.0, abs(before)) or before < 0 or after < 0:
            return MonotonicityViolation(
                tuple(tuple(blk) for blk in blocks), (tuple(blocks[a]), tuple(blocks[b])), before, after
            )
        return None

    if n <= exhaustive_limit:
        for blocks in _set_partitions(n):
            for a, b in itertools.combinations(range(len(blocks)), 2):
                got = test(blocks, a, b)
                if got:
                    return got
        return None
    for t in range(trials):
        k = rng.randint(2, n) if t else n  # the first trial merges singletons
        labels = [rng.randrange(k) for _ in range(n)]
        blocks = [b for b in ([i for i in range(n) if labels[i] == j] for j in range(k)) if b]
        if len(blocks) < 2:
            continue
        a, b = rng.sample(range(len(blocks)), 2)
        got = test(blocks, a, b)
        if got:
            return got
    return None


#: every model's cost is minimised: said beside a count whose direction a reader could misread
LOWER_IS_BETTER = "lower is better"


def cost_label(model: Any) -> str:
    """The unit every view (the explorer, the report, the CLI) prints after a cost of
    ``model`` (a name or a model object): what the model counts (its ``counts``, else its
    ``unit``), and that lower is better where the count alone does not say so (Max Contract
    counts the arrays *not* contracted, Def. 19).

    >>> cost_label("max_contract"), cost_label("bohrium"), cost_label("max_locality")
    ('arrays not contracted (lower is better)', 'bytes', 'accesses repeated in another block (lower is better)')
    """
    if isinstance(model, str):
        key = model.lower().replace("-", "_")
        if key == "time":   # the time model (its calibration is not loaded for a label)
            return "seconds"
        model = COST_MODELS[key]() if key in COST_MODELS else None
    name = getattr(model, "name", "")
    unit = getattr(model, "unit", "") or ""
    if name == "bohrium":   # bytes or elements moved: a plain amount
        return unit or "bytes"
    counts = getattr(model, "counts", "")
    if counts:
        return f"{counts} ({LOWER_IS_BETTER})"
    return unit or "cost"
