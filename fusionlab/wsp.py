"""The WSP graph of a program (Def. 1, 10-12) and the partition state the algorithms edit (Def. 14-17).

A :class:`WSPGraph` has one vertex per instruction (0-based ``int``), dependency edges
``E_d`` (conflicting accesses to overlapping views, in program order) and fuse-preventing
edges ``E_f``, each with a :class:`Conflict` reason. A :class:`PartitionState` is a
partition of those vertices into blocks with the contracted (partition) graph; its
:meth:`~PartitionState.merge_problem` is Lemma 1's legal-merge test.

Examples
--------
>>> from fusionlab.examples import fig3
>>> g = WSPGraph(fig3())
>>> g.forbidden(4, 9)            # ADD A, A, D[:-1]  vs  MAX D[1:], T, E[1:]
(<Conflict.OVERLAP: 'overlapping views that are not identical (Def. 12)'>, 'D[1:] overlaps D[:-1]')
>>> g.forbidden(0, 2)[0].name    # COPY A, 0 iterates over 4 elements, COPY D, 0 over 5
'SHAPE'
>>> s = PartitionState(g)
>>> s.merge_problem(s.block_of[0], s.block_of[4]) is None
True
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Iterable, Iterator

from .bytecode import Instruction, OpFamily, Program, View
from .text import format_view

__all__ = ["Conflict", "IllegalMerge", "Dependency", "WSPGraph", "PartitionState", "partition_problems"]


class Conflict(enum.Enum):
    """Why two instructions may not share a block (a fuse-preventing edge)."""

    OVERLAP = "overlapping views that are not identical (Def. 12)"
    SHAPE = "different iteration shapes"
    OPAQUE = "an opaque instruction runs alone"
    REDUCTION_RESULT = "reads the result of a reduction or scan that is not complete inside the kernel"


class IllegalMerge(enum.Enum):
    """Why merging two blocks is illegal (Lemma 1)."""

    FORBIDDEN = "a fuse-preventing edge joins the blocks"
    CYCLE = "a dependency path of length >= 2 joins the blocks; merging would make a cycle"
    SAME_BLOCK = "the two instructions are already in one block"


class Access(enum.Enum):
    """The kind of a dependency: which accesses conflict."""

    RAW = "read after write"
    WAR = "write after read"
    WAW = "write after write"


@dataclass(frozen=True)
class Dependency:
    """An edge of ``E_d``: ``target`` must run after ``source``."""

    source: int
    target: int
    kind: Access
    base: str


class WSPGraph:
    """Vertices, dependencies and fuse-preventing edges of a program.

    Parameters
    ----------
    program
        The program; its instructions become vertices ``0 .. len(program) - 1``.

    Notes
    -----
    Fuse-preventing edges from different shapes and from opaque instructions are kept as
    rules over vertex classes rather than listed pair by pair (a program with two shapes
    would otherwise store a quadratic number of edges); :meth:`forbidden` and
    :meth:`forbidden_edges` answer for both kinds.
    """

    def __init__(self, program: Program) -> None:
        self.program = program
        n = self.n = len(program)
        self.succ: list[set[int]] = [set() for _ in range(n)]
        self.pred: list[set[int]] = [set() for _ in range(n)]
        self.dependencies: dict[tuple[int, int], Dependency] = {}
        self._explicit: dict[tuple[int, int], tuple[Conflict, str]] = {}
        self.explicit_mask: list[int] = [0] * n
        self.domain: list[tuple[int, ...] | None] = [ins.domain for ins in program]
        self.opaque: list[bool] = [ins.opcode in OpFamily.OPAQUE for ins in program]
        self._build()

    # -- construction -----------------------------------------------------------------
    def _build(self) -> None:
        per_base: dict[str, list[tuple[int, Instruction]]] = {}
        for i, ins in enumerate(self.program):
            for name in {v.base.name for v in ins.reads() + ins.writes()}:
                per_base.setdefault(name, []).append((i, ins))
        for name, users in per_base.items():
            for a in range(len(users)):
                i, fi = users[a]
                wi = [v for v in fi.writes() if v.base.name == name]
                ri = [v for v in fi.reads() if v.base.name == name]
                for b in range(a + 1, len(users)):
                    j, fj = users[b]
                    wj = [v for v in fj.writes() if v.base.name == name]
                    rj = [v for v in fj.reads() if v.base.name == name]
                    kind = (
                        Access.RAW if _meet(wi, rj)
                        else Access.WAW if _meet(wi, wj)
                        else Access.WAR if _meet(ri, wj)
                        else None
                    )
                    if kind is not None:
                        self._add_dependency(i, j, kind, name)
                    self._check_fusible(i, fi, j, fj, name)

    def _add_dependency(self, i: int, j: int, kind: Access, base: str) -> None:
        if (i, j) not in self.dependencies:
            self.dependencies[(i, j)] = Dependency(i, j, kind, base)
            self.succ[i].add(j)
            self.pred[j].add(i)

    def _check_fusible(self, i: int, fi: Instruction, j: int, fj: Instruction, name: str) -> None:
        """Def. 12 on the accesses of one base, plus the reduction-result rule."""
        if fi.opcode in OpFamily.SYSTEM or fj.opcode in OpFamily.SYSTEM:
            return  # DEL and SYNC fuse with anything
        for o in (v for v in fi.writes() if v.base.name == name):
            for x in (v for v in fj.reads() + fj.writes() if v.base.name == name):
                if x != o and x.overlaps(o):
                    self._forbid(i, j, Conflict.OVERLAP, f"{format_view(x)} overlaps {format_view(o)}")
                    return
                if fi.opcode in OpFamily.REDUCTION | OpFamily.SCAN and x.overlaps(o):
                    self._forbid(i, j, Conflict.REDUCTION_RESULT,
                                 f"{fi.opcode.name} result {format_view(o)} is used again")
                    return
        for o in (v for v in fj.writes() if v.base.name == name):
            for x in (v for v in fi.reads() if v.base.name == name):
                if x != o and x.overlaps(o):
                    self._forbid(i, j, Conflict.OVERLAP, f"{format_view(o)} overlaps {format_view(x)}")
                    return

    def _forbid(self, i: int, j: int, reason: Conflict, detail: str) -> None:
        key = (min(i, j), max(i, j))
        self._explicit.setdefault(key, (reason, detail))
        self.explicit_mask[i] |= 1 << j
        self.explicit_mask[j] |= 1 << i

    # -- queries ----------------------------------------------------------------------
    def forbidden(self, u: int, v: int) -> tuple[Conflict, str] | None:
        """The reason ``u`` and ``v`` may not share a block, or ``None`` if they may."""
        if u == v:
            return None
        got = self._explicit.get((min(u, v), max(u, v)))
        if got is not None:
            return got
        if (self.opaque[u] and self.domain[v] is not None) or (self.opaque[v] and self.domain[u] is not None) or (self.opaque[u] and self.opaque[v]):
            which = u if self.opaque[u] else v
            return Conflict.OPAQUE, f"instruction {which + 1} is opaque"
        du, dv = self.domain[u], self.domain[v]
        if du is not None and dv is not None and du != dv:
            return Conflict.SHAPE, f"{_shape(du)} vs {_shape(dv)}"
        return None

    def forbidden_edges(self) -> Iterator[tuple[int, int, Conflict, str]]:
        """Every fuse-preventing edge ``(u, v, reason, detail)`` with ``u < v`` (quadratic)."""
        for u in range(self.n):
            for v in range(u + 1, self.n):
                got = self.forbidden(u, v)
                if got is not None:
                    yield u, v, got[0], got[1]

    def drawn_conflicts(self) -> list[tuple[int, int, Conflict, str]]:
        """The fuse-preventing edges a picture shows: all but those of shape alone (node
        labels show each shape). Linear in the explicit edges and opaque pairs, cached."""
        cached = getattr(self, "_drawn", None)
        if cached is None:
            pairs = set(self._explicit)
            opaque = [i for i in range(self.n) if self.opaque[i]]
            for o in opaque:
                for j in range(self.n):
                    if j != o and (self.domain[j] is not None or self.opaque[j]):
                        pairs.add((min(o, j), max(o, j)))
            cached = []
            for u, v in sorted(pairs):
                got = self.forbidden(u, v)
                if got is not None and got[0] is not Conflict.SHAPE:
                    cached.append((u, v, got[0], got[1]))
            self._drawn = cached
        return cached

    def to_networkx(self) -> "object":
        """A ``networkx.MultiDiGraph``: ``kind="dependency"`` edges and ``kind="forbidden"`` ones.

        >>> from fusionlab.examples import fig3
        >>> G = WSPGraph(fig3()).to_networkx()
        >>> G.number_of_nodes(), G.nodes[0]["label"]
        (17, 'COPY A, 0')
        """
        import networkx as nx

        from .text import format_instruction

        G = nx.MultiDiGraph()
        for i, ins in enumerate(self.program):
            G.add_node(i, number=i + 1, label=format_instruction(ins), family=ins.family)
        for (u, v), dep in self.dependencies.items():
            G.add_edge(u, v, kind="dependency", access=dep.kind.name, base=dep.base)
        for u, v, reason, detail in self.forbidden_edges():
            G.add_edge(u, v, kind="forbidden", reason=reason.name, detail=detail)
        return G


def _meet(xs: list[View], ys: list[View]) -> bool:
    return any(x.overlaps(y) for x in xs for y in ys)


def _shape(shape: tuple[int, ...]) -> str:
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


# --------------------------------------------------------------------------- partitions


def _bits(mask: int) -> Iterator[int]:
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


class PartitionState:
    """A partition of a WSP graph's vertices with its partition graph (Def. 14-15).

    Blocks are identified by integer ids; ``members[b]`` is a bit mask of the block's
    instructions and ``block_of[i]`` the block of instruction ``i``. Merging two blocks
    contracts them in the partition graph (Def. 16).

    Parameters
    ----------
    graph
        The WSP graph.
    blocks
        Initial blocks (iterables of instruction indices); singletons when omitted.
    """

    def __init__(self, graph: WSPGraph, blocks: Iterable[Iterable[int]] | None = None) -> None:
        self.graph = graph
        n = graph.n
        if blocks is None:
            blocks = [[i] for i in range(n)]
        self.members: dict[int, int] = {}
        self.block_of: list[int] = [-1] * n
        for b, blk in enumerate(blocks):
            mask = 0
            for i in blk:
                if self.block_of[i] != -1:
                    raise ValueError(f"instruction {i + 1} is in two blocks")
                self.block_of[i] = b
                mask |= 1 << i
            if mask:
                self.members[b] = mask
        if -1 in self.block_of:
            raise ValueError(f"instruction {self.block_of.index(-1) + 1} is in no block")
        self._next_id = max(self.members, default=-1) + 1
        self.succ: dict[int, set[int]] = {b: set() for b in self.members}
        self.pred: dict[int, set[int]] = {b: set() for b in self.members}
        for (u, v) in graph.dependencies:
            bu, bv = self.block_of[u], self.block_of[v]
            if bu != bv:
                self.succ[bu].add(bv)
                self.pred[bv].add(bu)
        self.domain: dict[int, tuple[int, ...] | None] = {}
        self.opaque: dict[int, bool] = {}
        self.explicit: dict[int, int] = {}
        self.first: dict[int, int] = {}
        self.last: dict[int, int] = {}
        for b, mask in self.members.items():
            self._summarise(b, mask)

    def _summarise(self, b: int, mask: int) -> None:
        g = self.graph
        dom, opq, expl = None, False, 0
        idx = list(_bits(mask))
        for i in idx:
            dom = dom if g.domain[i] is None else g.domain[i]
            opq = opq or g.opaque[i]
            expl |= g.explicit_mask[i]
        self.domain[b], self.opaque[b], self.explicit[b] = dom, opq, expl
        self.first[b], self.last[b] = idx[0], idx[-1]

    # -- views of the state ------------------------------------------------------------
    def blocks(self) -> list[tuple[int, ...]]:
        """The blocks as sorted tuples of instruction indices, ordered by first instruction."""
        out = [tuple(_bits(m)) for m in self.members.values()]
        return sorted(out)

    def block(self, b: int) -> tuple[int, ...]:
        """The instructions of block ``b``."""
        return tuple(_bits(self.members[b]))

    def copy(self) -> "PartitionState":
        """An independent copy."""
        other = object.__new__(PartitionState)
        other.graph = self.graph
        other.members = dict(self.members)
        other.block_of = list(self.block_of)
        other._next_id = self._next_id
        other.succ = {b: set(s) for b, s in self.succ.items()}
        other.pred = {b: set(s) for b, s in self.pred.items()}
        for name in ("domain", "opaque", "explicit", "first", "last"):
            setattr(other, name, dict(getattr(self, name)))
        return other

    def neighbours(self, b: int) -> set[int]:
        """Blocks joined to ``b`` by a dependency in either direction."""
        return self.succ[b] | self.pred[b]

    # -- Lemma 1 ------------------------------------------------------------------------
    def compatible(self, b1: int, b2: int) -> bool:
        """Whether no fuse-preventing edge joins the blocks (``forbidden_between`` without
        the explanation, for the algorithms' inner loops)."""
        d1, d2 = self.domain[b1], self.domain[b2]
        if d1 is not None and d2 is not None and d1 != d2:
            return False
        if self.explicit[b1] & self.members[b2]:
            return False
        if self.opaque[b1] or self.opaque[b2]:
            return self.forbidden_between(b1, b2) is None
        return True

    def forbidden_between(self, b1: int, b2: int) -> tuple[Conflict, str] | None:
        """A fuse-preventing edge between the two blocks, with its reason, or ``None``."""
        d1, d2 = self.domain[b1], self.domain[b2]
        if self.opaque[b1] or self.opaque[b2]:
            if (self.opaque[b1] and d2 is not None) or (self.opaque[b2] and d1 is not None) or (
                self.opaque[b1] and self.opaque[b2]
            ):
                u, v = self._witness(b1, b2)
                return self.graph.forbidden(u, v)
        if d1 is not None and d2 is not None and d1 != d2:
            return Conflict.SHAPE, f"{_shape(d1)} vs {_shape(d2)}"
        hit = self.explicit[b1] & self.members[b2]
        if hit:
            v = (hit & -hit).bit_length() - 1
            for u in _bits(self.members[b1]):
                got = self.graph.forbidden(u, v)
                if got is not None:
                    return got
        return None

    def _witness(self, b1: int, b2: int) -> tuple[int, int]:
        for u in _bits(self.members[b1]):
            for v in _bits(self.members[b2]):
                if self.graph.forbidden(u, v) is not None:
                    return u, v
        raise AssertionError("no witness")  # only called when a rule applies

    def long_path(self, b1: int, b2: int) -> list[int] | None:
        """A path ``b1 -> x -> ... -> b2`` of length >= 2 in the partition graph, or ``None``.

        A bidirectional search: forwards from ``b1``, backwards from ``b2``, growing the
        smaller frontier. (Program order cannot prune it: blocks may interleave, and an edge
        ``X -> Y`` only says that some instruction of ``X`` precedes some of ``Y``.)
        """
        ahead = {x: b1 for x in self.succ[b1] if x != b2}
        behind = {x: b2 for x in self.pred[b2] if x != b1}
        front_a, front_b = list(ahead), list(behind)
        while True:
            meet = next((x for x in front_a if x in behind), None)
            if meet is None:
                meet = next((x for x in front_b if x in ahead), None)
            if meet is not None:
                path = [meet]
                while path[0] != b1:
                    path.insert(0, ahead[path[0]])
                while path[-1] != b2:
                    path.append(behind[path[-1]])
                return path
            if not front_a or not front_b:
                return None
            if len(front_a) <= len(front_b):
                nxt = []
                for x in front_a:
                    for y in self.succ[x]:
                        if y not in ahead and y != b1 and y != b2:
                            ahead[y] = x
                            nxt.append(y)
                front_a = nxt
            else:
                nxt = []
                for x in front_b:
                    for y in self.pred[x]:
                        if y not in behind and y != b1 and y != b2:
                            behind[y] = x
                            nxt.append(y)
                front_b = nxt

    def reaches(self, b1: int, b2: int) -> bool:
        """Whether a dependency path leads from block ``b1`` to block ``b2``."""
        return b2 in self.succ[b1] or self.long_path(b1, b2) is not None

    def pendant_on(self, b: int) -> int | None:
        """The only neighbour of ``b`` in the transitive reduction of the partition graph,
        ``-1`` when ``b`` has no dependencies, ``None`` when it has several neighbours."""
        succ, pred = self.succ[b], self.pred[b]
        if not succ and not pred:
            return -1
        if succ and pred:
            return None
        around = succ or pred
        for v in around:
            if all(x == v or (self.reaches(v, x) if succ else self.reaches(x, v)) for x in around):
                return v
        return None

    def can_merge(self, b1: int, b2: int) -> bool:
        """Lemma 1 without the explanation: whether merging keeps the partition legal."""
        return (
            b1 != b2
            and self.compatible(b1, b2)
            and self.long_path(b1, b2) is None
            and self.long_path(b2, b1) is None
        )

    def merge_problem(self, b1: int, b2: int) -> tuple[IllegalMerge, str] | None:
        """Lemma 1: ``None`` when merging ``b1`` and ``b2`` keeps the partition legal,
        else the reason and a human-readable detail."""
        if b1 == b2:
            return IllegalMerge.SAME_BLOCK, "already one block"
        got = self.forbidden_between(b1, b2)
        if got is not None:
            return IllegalMerge.FORBIDDEN, f"{got[0].value}: {got[1]}"
        for a, b in ((b1, b2), (b2, b1)):
            path = self.long_path(a, b)
            if path is not None:
                label = " -> ".join("{" + ",".join(str(i + 1) for i in self.block(x)) + "}" for x in path)
                return IllegalMerge.CYCLE, label
        return None

    def merge(self, b1: int, b2: int) -> int:
        """Contract blocks ``b1`` and ``b2`` (no legality check); returns the new block id."""
        z = self._next_id
        self._next_id += 1
        mask = self.members.pop(b1) | self.members.pop(b2)
        self.members[z] = mask
        for i in _bits(mask):
            self.block_of[i] = z
        succ = (self.succ.pop(b1) | self.succ.pop(b2)) - {b1, b2}
        pred = (self.pred.pop(b1) | self.pred.pop(b2)) - {b1, b2}
        self.succ[z], self.pred[z] = succ, pred
        for x in succ:
            self.pred[x] -= {b1, b2}
            self.pred[x].add(z)
        for x in pred:
            self.succ[x] -= {b1, b2}
            self.succ[x].add(z)
        for name in ("domain", "opaque", "explicit", "first", "last"):
            getattr(self, name).pop(b1)
            getattr(self, name).pop(b2)
        self._summarise(z, mask)
        return z


def partition_problems(graph: WSPGraph, blocks: Iterable[Iterable[int]]) -> list[str]:
    """Why a partition is illegal (Def. 5): forbidden pairs inside blocks, a cycle between
    blocks, instructions missing or repeated. An empty list means legal.

    >>> from fusionlab.examples import fig3
    >>> g = WSPGraph(fig3())
    >>> partition_problems(g, [range(17)])[0]
    'instructions 1 and 3 share a block: different iteration shapes ((4,) vs (5,))'
    """
    blocks = [sorted(set(b)) for b in blocks]
    seen = sorted(i for b in blocks for i in b)
    if seen != list(range(graph.n)):
        missing = sorted(set(range(graph.n)) - set(seen))
        return [f"every instruction must be in exactly one block (missing {[m + 1 for m in missing]}, "
                f"or repeated)"]
    problems = []
    for b in blocks:
        for x in range(len(b)):
            for y in range(x + 1, len(b)):
                got = graph.forbidden(b[x], b[y])
                if got is not None:
                    problems.append(
                        f"instructions {b[x] + 1} and {b[y] + 1} share a block: {got[0].value} ({got[1]})"
                    )
    state = PartitionState(graph, blocks)
    cycle = _find_cycle(state.succ)
    if cycle:
        label = " -> ".join("{" + ",".join(str(i + 1) for i in state.block(b)) + "}" for b in cycle)
        problems.append(f"the blocks depend on each other in a cycle: {label}")
    return problems


def reachability(succ: list[list[int]] | list[set[int]]) -> list[int]:
    """For each node of a DAG, the bit mask of the nodes a path of length >= 1 reaches."""
    n = len(succ)
    order: list[int] = []
    seen = [False] * n
    for root in range(n):
        if seen[root]:
            continue
        seen[root] = True
        stack = [(root, iter(succ[root]))]
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                order.append(node)
                stack.pop()
            elif not seen[nxt]:
                seen[nxt] = True
                stack.append((nxt, iter(succ[nxt])))
    reach = [0] * n
    for x in order:  # successors come first in this post-order
        for y in succ[x]:
            reach[x] |= (1 << y) | reach[y]
    return reach


def _find_cycle(succ: dict[int, set[int]]) -> list[int] | None:
    """A directed cycle ``[b0, b1, ..., b0]`` in ``succ``, or ``None``."""
    colour: dict[int, int] = {}
    for root in succ:
        if root in colour:
            continue
        stack: list[tuple[int, Iterator[int]]] = [(root, iter(sorted(succ[root])))]
        colour[root] = 1
        path = [root]
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                colour[node] = 2
                stack.pop()
                path.pop()
            elif colour.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            elif nxt not in colour:
                colour[nxt] = 1
                path.append(nxt)
                stack.append((nxt, iter(sorted(succ[nxt]))))
    return None
