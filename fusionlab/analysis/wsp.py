"""The WSP graph of a program (Def. 1, 10-12) and the partition state the algorithms edit (Def. 14-17).

A :class:`WSPGraph` has one vertex per instruction (0-based ``int``), dependency edges
``E_d`` (conflicting accesses to overlapping views, in program order) and fuse-preventing
edges ``E_f``, each with a :class:`Conflict` reason. A :class:`PartitionState` is a
partition of those vertices into blocks with the contracted (partition) graph; its
:meth:`~PartitionState.merge_problem` is Lemma 1's legal-merge test. Whether two blocks (or
two instructions) may share a block is decided in one place,
:func:`fusionlab.analysis.legality.fusion_conflict`; this module derives the explicit
fuse-preventing edges it reads.

Examples
--------
>>> from fusionlab.ir.examples import fig3
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

import math
from bisect import bisect_right

import numpy as np

from fusionlab.support.budget import UNLIMITED, Budget
from fusionlab.ir.bytecode import Instruction, Opcode, OpFamily, Program, View
from fusionlab.analysis.capabilities import DEFAULT, Capabilities
from fusionlab.analysis.filters import filter_readers, loop_domains
from fusionlab.analysis.legality import BlockSummary, Conflict, IllegalMerge, first_conflict, fusion_conflict
from fusionlab.ir.text import format_view

__all__ = ["Conflict", "IllegalMerge", "BlockSummary", "fusion_conflict", "Dependency", "WSPGraph",
           "PartitionState", "partition_problems", "bit_indices", "find_cycle", "reachability"]


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
    capabilities
        What the backend the graph is built for compiles
        (:class:`~fusionlab.analysis.capabilities.Capabilities`; ``None``: the default
        backend's, :data:`~fusionlab.analysis.capabilities.DEFAULT`). The rules that exist
        because of what a kernel can hold read it, and an instruction it does not compile
        runs alone.

    Notes
    -----
    Fuse-preventing edges from different shapes and from opaque instructions are kept as
    rules over vertex classes rather than listed pair by pair (a program with two shapes
    would otherwise store a quadratic number of edges); :meth:`forbidden` and
    :meth:`forbidden_edges` answer for both kinds.
    """

    def __init__(self, program: Program, *, budget: Budget | None = None,
                 capabilities: Capabilities | None = None) -> None:
        self.program = program
        self.capabilities = caps = DEFAULT if capabilities is None else capabilities
        n = self.n = len(program)
        self.succ: list[set[int]] = [set() for _ in range(n)]
        self.pred: list[set[int]] = [set() for _ in range(n)]
        self.dependencies: dict[tuple[int, int], Dependency] = {}
        self._explicit: dict[tuple[int, int], tuple[Conflict, str]] = {}
        # edges added after the contraction rules (theirs over classes come first)
        self._explicit_late: dict[tuple[int, int], tuple[Conflict, str]] = {}
        self._late = False
        self._contraction_of: dict[tuple[int, ...], int] = {}
        self.explicit_mask: list[int] = [0] * n
        # a filter-fold loops over its filter's input, not its output's recorded length
        self.domain: list[tuple[int, ...] | None] = loop_domains(program)
        # an instruction the backend does not compile runs alone, with NumPy (OPAQUE always)
        self.opaque: list[bool] = [caps.runs_alone(ins.opcode) for ins in program]
        #: Data later phases derive from the program once per graph (the cost models'
        #: access summaries), by name.
        self.derived: dict[str, object] = {}
        # one-instruction summaries, built on first use and dropped when an edge is added
        self._units: list[BlockSummary | None] = [None] * n
        self._build(UNLIMITED if budget is None else budget)
        self._forbid_filter_readers()
        self._scan_rules(UNLIMITED if budget is None else budget)
        self._contraction_rules()
        self._late = True
        self._histogram_rules()

    # -- construction -----------------------------------------------------------------
    def _build(self, budget: Budget) -> None:
        """Compare the accesses of each base pairwise, in program order.

        Two reads never conflict and never forbid a fusion, so only pairs where one of the
        two writes the base are compared: a base read by thousands of instructions (an
        array indexed element by element in a Python loop) costs its writers times its
        users, not its users squared. Every conflict needs two views that overlap, so a
        pair whose element intervals on the base are disjoint (rows of a matrix updated
        one by one) is skipped before it is compared. Instructions with the same views
        (a loop's iterations) compare alike: each pair of access patterns is compared
        once. ``budget`` is checked every few thousand pairs.
        """
        per_base: dict[str, list[int]] = {}
        for i, ins in enumerate(self.program):
            # bases in the order the instruction names them (not a set's: its order
            # changes between processes, and a pair conflicting on two bases keeps the first)
            for name in dict.fromkeys(v.base.name for v in ins.reads() + ins.writes()):
                per_base.setdefault(name, []).append(i)
        work = [0]
        for name, users in per_base.items():
            self._build_base(name, users, budget, work)

    def _build_base(self, name: str, users: list[int], budget: Budget, work: list[int]) -> None:
        """The dependencies and fuse-preventing edges among the users of base ``name``."""
        table = _AccessTable(self.program, name, users)
        effects: dict[tuple[int, int], tuple[Access | None, tuple[Conflict, str] | None]] = {}
        pattern, writers = table.pattern, table.writers
        for a in range(len(users)):
            later = table.later(a)
            work[0] += len(later)
            if work[0] > 4096:
                budget.check("WSP graph")
                work[0] = 0
            i, pa = users[a], pattern[a]
            for b in later:
                key = (pa, pattern[b])
                got = effects.get(key)
                if got is None:
                    got = effects[key] = table.effect(pa, pattern[b])
                kind, forbid = got
                if kind is not None:
                    self._add_dependency(i, users[b], kind, name)
                if forbid is not None:
                    self._forbid(i, users[b], forbid[0], forbid[1])

    def _forbid_filter_readers(self) -> None:
        """A filter's loop writes its output compacted (at a running count, not the loop
        index): nothing but a filter-fold may use that output in the same loop."""
        for c, users in filter_readers(self.program).items():
            for j in users:
                self._forbid(c, j, Conflict.FILTER_OUTPUT,
                             f"{self.program[j].opcode.name} uses {self.program[c].outputs[0].base.name}, "
                             f"the output of COMPRESS (instruction {c + 1})")

    def _add_dependency(self, i: int, j: int, kind: Access, base: str) -> None:
        if (i, j) not in self.dependencies:
            self.dependencies[(i, j)] = Dependency(i, j, kind, base)
            self.succ[i].add(j)
            self.pred[j].add(i)

    def _scan_rules(self, budget: Budget = UNLIMITED) -> None:
        """The fuse-preventing edges of scans that are not about one base (004 §4.2): a
        scan with any reduction or filter, with a scan along another axis, and with a later scan
        its result flows into (through element-wise consumers, which may share its block).
        Same-shape pairs only: other pairs are forbidden by shape already. ``budget`` is
        checked per scan (300 cumsums of a loop, each's data flow followed: 20 s on a
        loaded machine). Each rule exists because of what the backend's kernels hold, so each
        reads its :class:`~fusionlab.analysis.capabilities.Capabilities` field."""
        caps = self.capabilities
        # a scan the backend does not compile runs alone already (self.opaque)
        scans = [i for i, ins in enumerate(self.program) if ins.opcode in OpFamily.SCAN and not self.opaque[i]]
        if not scans:
            return
        reductions = [i for i, ins in enumerate(self.program) if ins.opcode in OpFamily.REDUCTION]
        filters = [i for i, ins in enumerate(self.program) if ins.opcode in OpFamily.FILTER]
        for s in scans:
            budget.check("WSP graph")
            fs = self.program[s]
            for f in filters if not caps.scan_with_filter else ():
                if self.domain[f] == self.domain[s]:
                    self._forbid(s, f, Conflict.SCAN_FILTER, f"{fs.opcode.name} with COMPRESS {f + 1}")
            for r in reductions if not caps.scan_with_reduction else ():
                if self.domain[r] == self.domain[s]:
                    self._forbid(s, r, Conflict.SCAN_REDUCTION, f"{fs.opcode.name} with {self.program[r].opcode.name}")
            for t in scans if not caps.mixed_scan_axes else ():
                if t > s and self.domain[t] == self.domain[s] and _scan_axis(fs) != _scan_axis(self.program[t]):
                    self._forbid(s, t, Conflict.SCAN_AXES, f"axis {_scan_axis(fs)} vs {_scan_axis(self.program[t])}")
            for t in self._data_flow_from(s) if not caps.chained_scans else ():
                if self.program[t].opcode in OpFamily.SCAN and self.domain[t] == self.domain[s]:
                    self._forbid(s, t, Conflict.SCAN_RESULT,
                                 f"{self.program[t].opcode.name} {t + 1} reads what {fs.opcode.name} {s + 1} computed")

    def _data_flow_from(self, s: int) -> set[int]:
        """Instructions that read (through any chain of reads after writes) what ``s`` writes."""
        reached, todo = set(), [s]
        while todo:
            i = todo.pop()
            wi = list(self.program[i].writes())
            for j in self.succ[i]:
                if j not in reached and _meet(wi, list(self.program[j].reads())):
                    reached.add(j)
                    todo.append(j)
        return reached

    def _contraction_rules(self) -> None:
        """A contraction shares its kernel only with its *epilogue*: element-wise
        instructions over its output's domain that neither compute nor write its operands
        (docs/contractions.md, "Contractions: fusion"). Pairs of other shapes are SHAPE
        conflicts already; those that read the output through another view, OVERLAP ones.

        A contraction's conflicts with the other contractions and the non-element-wise
        instructions of its domain are a rule over classes (:meth:`_class_reason` gives
        their reasons; the masks are set once per class member), not pairs listed one by
        one: a Cholesky factorisation's Python loop of dot products (1,275 of them at
        n = 50, in one batch with 7,000 instructions) made a quadratic number of pairs.
        The writers of its operands are found through each base's writers, by interval."""
        contractions = [c for c, ins in enumerate(self.program) if ins.opcode in OpFamily.CONTRACTION]
        self._contraction_of: dict[tuple[int, ...], int] = {}   # domain -> mask of its contractions
        if not contractions:
            return
        classes: dict[tuple[int, ...], int] = {}   # domain -> mask of its non-element-wise instructions
        for j, ins in enumerate(self.program):
            if self.domain[j] is not None and ins.opcode not in self.capabilities.contraction_epilogue:
                classes[self.domain[j]] = classes.get(self.domain[j], 0) | 1 << j
        for c in contractions:
            self._contraction_of[self.domain[c]] = self._contraction_of.get(self.domain[c], 0) | 1 << c
        for domain, cs in self._contraction_of.items():
            for j in bit_indices(classes[domain]):
                others = classes[domain] if cs >> j & 1 else cs
                self.explicit_mask[j] |= others & ~(1 << j)
                self._units[j] = None
        self._operand_writers(contractions)

    def _operand_writers(self, contractions: list[int]) -> None:
        """The element-wise instructions of a contraction's domain that write one of its
        operands (CONTRACTION_PRODUCER before it, CONTRACTION_OPERAND after)."""
        spans: dict[str, tuple[list[int], list[int], list[int]]] = {}   # base -> writers, lows, highs
        for j, ins in enumerate(self.program):
            if ins.opcode not in self.capabilities.contraction_epilogue or self.domain[j] is None:
                continue
            for v in ins.writes():
                if v.size:
                    lo, hi = v.interval()
                    got = spans.setdefault(v.base.name, ([], [], []))
                    got[0].append(j), got[1].append(lo), got[2].append(hi)
        arrays = {name: tuple(np.array(x, dtype=np.int64) for x in got) for name, got in spans.items()}
        for c in contractions:
            c_ins = self.program[c]
            found: set[int] = set()
            for v in c_ins.views_in:
                if v.base.name not in arrays or not v.size:
                    continue
                who, lows, highs = arrays[v.base.name]
                lo, hi = v.interval()
                found.update(who[(lows <= hi) & (highs >= lo)].tolist())
            for j in sorted(found):
                if j != c and self.domain[j] == self.domain[c]:
                    got = _contraction_conflict(c_ins, c, self.program[j], j, self.capabilities.contraction_epilogue)
                    if got is not None:
                        self._forbid(c, j, got[0], got[1])

    def _class_pairs(self) -> dict[tuple[int, int], tuple[Conflict, str]]:
        """Every pair of the contraction rule over classes, with its reason (quadratic in a
        class: for pictures of the graph)."""
        out: dict[tuple[int, int], tuple[Conflict, str]] = {}
        for cs in self._contraction_of.values():
            for c in bit_indices(cs):
                for j in bit_indices(self.explicit_mask[c]):
                    key = (min(c, j), max(c, j))
                    if key not in out and key not in self._explicit:
                        got = self._class_reason(c, j)
                        if got is not None:
                            out[key] = got
        return out

    def _class_reason(self, u: int, v: int) -> tuple[Conflict, str] | None:
        """The reason of a pair of the contraction rule over classes (a contraction and
        another contraction or non-element-wise instruction of its domain), or None."""
        if self.domain[u] is None or self.domain[u] != self.domain[v]:
            return None
        cs = self._contraction_of.get(self.domain[u], 0)
        if not cs >> u & 1 and not cs >> v & 1:
            return None
        # the lower contraction names the pair, as the rule reads them in program order
        c, j = (u, v) if cs >> u & 1 and (u < v or not cs >> v & 1) else (v, u)
        epilogue = self.capabilities.contraction_epilogue
        if self.program[j].opcode in epilogue:
            return None
        return _contraction_conflict(self.program[c], c, self.program[j], j, epilogue)

    def _histogram_rules(self) -> None:
        """A histogram shares its kernel with the instructions that are one element per
        iteration of its input's domain: element-wise ones (the maps producing its values and
        weights), generators (recorded draws, ranges), gathers, and other histograms; each
        chunk counts into its own bins, summed after the loop. Reductions, scans, filters and
        contractions of the same domain keep their own kernels (HISTOGRAM_COMPANION: their
        loop forms are not combined with per-chunk bins); pairs of other shapes are SHAPE
        conflicts already, and readers of its bins REDUCTION_RESULT ones."""
        histograms = [h for h, ins in enumerate(self.program) if ins.opcode in OpFamily.HISTOGRAM]
        allowed = self.capabilities.histogram_companions | OpFamily.SYSTEM
        for h in histograms:
            for j in range(self.n):
                ins = self.program[j]
                if j != h and ins.opcode not in allowed and self.domain[j] == self.domain[h]:
                    self._forbid(h, j, Conflict.HISTOGRAM_COMPANION,
                                 f"{ins.opcode.name} {j + 1} beside BINCOUNT {h + 1}")

    def forbid_pair(self, i: int, j: int, reason: Conflict, detail: str) -> None:
        """Add a fuse-preventing edge (an exact search's relaxation adds the pairs it derived
        from the whole program to a part of it)."""
        self._forbid(i, j, reason, detail)

    def _forbid(self, i: int, j: int, reason: Conflict, detail: str) -> None:
        key = (min(i, j), max(i, j))
        # an edge added after the contraction rules gives way to theirs, as the first rule
        # that forbids a pair names it
        if not self._late:
            self._explicit.setdefault(key, (reason, detail))
        elif key not in self._explicit and self._class_reason(i, j) is None:
            self._explicit_late.setdefault(key, (reason, detail))
        self.explicit_mask[i] |= 1 << j
        self.explicit_mask[j] |= 1 << i
        self._units[i] = self._units[j] = None

    # -- queries ----------------------------------------------------------------------
    def unit(self, i: int) -> BlockSummary:
        """The summary of the one-instruction block ``{i}`` (what the fusion rule reads)."""
        got = self._units[i]
        if got is None:
            got = self._units[i] = BlockSummary(1 << i, self.domain[i], int(self.opaque[i]) << i,
                                                self.explicit_mask[i])
        return got

    def explicit_reason(self, u: int, v: int) -> tuple[Conflict, str]:
        """The reason and detail of the explicit fuse-preventing edge joining ``u`` and ``v``
        (``KeyError`` when there is none)."""
        key = (min(u, v), max(u, v))
        got = self._explicit.get(key)
        if got is not None:
            return got
        got = self._class_reason(u, v)
        if got is not None:
            return got
        return self._explicit_late[key]

    def forbidden(self, u: int, v: int) -> tuple[Conflict, str] | None:
        """The reason ``u`` and ``v`` may not share a block, or ``None`` if they may:
        :func:`~fusionlab.analysis.legality.fusion_conflict` on the two one-instruction blocks."""
        if u == v:
            return None
        return fusion_conflict(self, self.unit(u), self.unit(v))

    def forbidden_edges(self) -> Iterator[tuple[int, int, Conflict, str]]:
        """Every fuse-preventing edge ``(u, v, reason, detail)`` with ``u < v`` (quadratic)."""
        for u in range(self.n):
            for v in range(u + 1, self.n):
                got = self.forbidden(u, v)
                if got is not None:
                    yield u, v, got[0], got[1]

    def drawn_conflicts(self, budget: Budget = UNLIMITED) -> list[tuple[int, int, Conflict, str]]:
        """The fuse-preventing edges a picture shows: all but those of shape alone (node
        labels show each shape). Linear in the explicit edges and opaque pairs, cached.
        ``budget`` is checked per opaque instruction (:class:`BudgetExceeded`; nothing is
        cached then)."""
        cached = getattr(self, "_drawn", None)
        if cached is None:
            # an explicit edge is what forbidden() answers first (never a shape)
            edges = {**self._explicit, **self._class_pairs(), **self._explicit_late}
            opaque = [i for i in range(self.n) if self.opaque[i]]
            for o in opaque:
                budget.check("WSP graph: drawn edges")
                for j in range(self.n):
                    key = (min(o, j), max(o, j))
                    if j != o and (self.domain[j] is not None or self.opaque[j]) and key not in edges:
                        got = self.forbidden(*key)
                        if got is not None and got[0] is not Conflict.SHAPE:
                            edges[key] = got
            cached = [(u, v, r, d) for (u, v), (r, d) in sorted(edges.items())]
            self._drawn = cached
        return cached

    def to_networkx(self) -> "object":
        """A ``networkx.MultiDiGraph``: ``kind="dependency"`` edges and ``kind="forbidden"`` ones.

        >>> from fusionlab.ir.examples import fig3
        >>> G = WSPGraph(fig3()).to_networkx()
        >>> G.number_of_nodes(), G.nodes[0]["label"]
        (17, 'COPY A, 0')
        """
        import networkx as nx

        from fusionlab.ir.text import format_instruction

        G = nx.MultiDiGraph()
        for i, ins in enumerate(self.program):
            G.add_node(i, number=i + 1, label=format_instruction(ins), family=ins.family)
        for (u, v), dep in self.dependencies.items():
            G.add_edge(u, v, kind="dependency", access=dep.kind.name, base=dep.base)
        for u, v, reason, detail in self.forbidden_edges():
            G.add_edge(u, v, kind="forbidden", reason=reason.name, detail=detail)
        return G


def _contraction_conflict(c_ins: Instruction, c: int, ins: Instruction, j: int,
                          epilogue: frozenset[Opcode]) -> tuple[Conflict, str] | None:
    """Why instruction ``j`` (same domain) may not join contraction ``c``'s kernel, or None
    (``epilogue``: the opcodes the backend's contraction kernels take beside it)."""
    name = f"{ins.opcode.name} {j + 1}"
    if ins.opcode in OpFamily.CONTRACTION:
        return Conflict.CONTRACTION_PAIR, f"CONTRACT {c + 1} and CONTRACT {j + 1}"
    if ins.opcode not in epilogue:
        return Conflict.CONTRACTION_EPILOGUE, f"{name} is a {ins.family} instruction beside CONTRACT {c + 1}"
    written = [v for v in ins.writes() if _meet([v], list(c_ins.views_in))]
    if written and j < c:
        return Conflict.CONTRACTION_PRODUCER, f"{name} computes {format_view(written[0])}, read by CONTRACT {c + 1}"
    if written:
        return Conflict.CONTRACTION_OPERAND, f"{name} writes {format_view(written[0])}, read by CONTRACT {c + 1}"
    return None


def _scan_axis(ins: Instruction) -> int | None:
    """The axis a scan runs along, normalised (``None``: the flattened input)."""
    axis = ins.attr("axis")
    return None if axis is None else axis % max(ins.outputs[0].ndim, 1)


def _meet(xs: list[View], ys: list[View]) -> bool:
    return any(x.overlaps(y) for x in xs for y in ys)


# instructions whose result is complete only at the end of their kernel
_REDUCING = OpFamily.REDUCTION | OpFamily.SCAN | OpFamily.HISTOGRAM
_SYSTEM_ROLES = ("sync", "system")


def _role(ins: Instruction) -> str:
    """What the fusion rules of one base ask of an instruction beyond its views."""
    if ins.opcode is Opcode.SYNC:
        return "sync"
    if ins.opcode in OpFamily.SYSTEM:
        return "system"
    return "elementwise" if ins.opcode in OpFamily.ELEMENTWISE else ""


def _gathered(ins: Instruction) -> tuple[View, ...]:
    """The views an instruction reads at data-dependent positions: a gather's source."""
    return ins.views_in[:1] if ins.opcode in OpFamily.GATHER else ()


# users of one base above which candidate pairs are found with NumPy, not a Python loop
_VECTOR_USERS = 48


class _AccessTable:
    """The accesses of one base by its users (instruction indices in program order): each
    user's *pattern* (its written and read views of the base and its family, interned as
    an int) and the element interval its views span, to find the pairs worth comparing."""

    def __init__(self, program: Program, name: str, users: list[int]) -> None:
        view_ids: dict[View, int] = {}
        patterns: dict[tuple[object, ...], int] = {}
        self.views: list[View] = []
        self.name = name
        self.kinds: list[tuple[tuple[int, ...], tuple[int, ...], str, str | None, bool, tuple[int, ...]]] = []
        self.pattern: list[int] = []
        writes: list[bool] = []
        #: per user, the distinct element intervals of its views of the base: two users
        #: conflict only where two of their views overlap, and the intervals of two rows
        #: read by one instruction (a Cholesky step's ``np.dot(A[i, :j], A[j, :j])``) leave
        #: the rows between them out, where one span over both took them in (every write
        #: between them was a candidate: about n^4 pairs instead of n^3)
        self.spans: list[tuple[tuple[int, int], ...]] = []
        for i in users:
            ins = program[i]
            ws = tuple(self._intern(v, view_ids) for v in ins.writes() if v.base.name == name)
            rs = tuple(self._intern(v, view_ids) for v in ins.reads() if v.base.name == name)
            # a gather's source is read anywhere, not at the loop's index (GATHER_SOURCE)
            gs = tuple(self._intern(v, view_ids) for v in _gathered(ins) if v.base.name == name)
            key = (ws, rs, _role(ins), ins.opcode.name if ins.opcode in _REDUCING else None,
                   ins.opcode in OpFamily.SCAN, gs)
            p = patterns.get(key)
            if p is None:
                p = patterns[key] = len(self.kinds)
                self.kinds.append(key)
            self.pattern.append(p)
            # views of no element overlap nothing: no interval
            self.spans.append(tuple(dict.fromkeys(self.views[k].interval() for k in ws + rs if self.views[k].size)))
            writes.append(bool(ws))
        self.writes = writes
        self.writers = [a for a in range(len(users)) if writes[a]]
        self.overlap: dict[tuple[int, int], bool] = {}
        self.text: dict[int, str] = {}
        if len(users) > _VECTOR_USERS:
            # every interval of every user, in program order of the users (``_user`` sorted),
            # and those of the writers apart
            entries = [(a, lo, hi) for a, sp in enumerate(self.spans) for lo, hi in sp]
            table = np.array(entries, dtype=np.int64).reshape(-1, 3)
            self._user, self._lo, self._hi = table[:, 0], table[:, 1], table[:, 2]
            written = np.asarray(writes, dtype=bool)[self._user]
            self._wuser, self._wlo, self._whi = self._user[written], self._lo[written], self._hi[written]

    def _intern(self, v: View, ids: dict[View, int]) -> int:
        k = ids.get(v)
        if k is None:
            k = ids[v] = len(self.views)
            self.views.append(v)
        return k

    def later(self, a: int) -> list[int]:
        """The users after ``a`` that may conflict with it: all later ones when ``a``
        writes, else the later writers; only those with an interval that meets one of
        ``a``'s. In program order."""
        spans = self.spans[a]
        if not spans:
            return []
        if len(self.spans) <= _VECTOR_USERS:
            cands = range(a + 1, len(self.spans)) if self.writes[a] else self.writers[bisect_right(self.writers, a):]
            return [b for b in cands if any(lo <= h and hi >= l for lo, hi in self.spans[b] for l, h in spans)]
        user, los, his = (self._user, self._lo, self._hi) if self.writes[a] else (self._wuser, self._wlo, self._whi)
        start = int(np.searchsorted(user, a, side="right"))
        user, los, his = user[start:], los[start:], his[start:]
        meets = np.zeros(len(user), dtype=bool)
        for l, h in spans:
            meets |= (los <= h) & (his >= l)
        return np.unique(user[meets]).tolist()

    def _meets(self, xs: tuple[int, ...], ys: tuple[int, ...]) -> bool:
        return any(self._overlaps(x, y) for x in xs for y in ys)

    def _overlaps(self, x: int, y: int) -> bool:
        got = self.overlap.get((x, y))
        if got is None:
            got = self.overlap[(x, y)] = self.overlap[(y, x)] = self.views[x].overlaps(self.views[y])
        return got

    def _format(self, x: int) -> str:
        got = self.text.get(x)
        if got is None:
            got = self.text[x] = format_view(self.views[x])
        return got

    def effect(self, pa: int, pb: int) -> tuple[Access | None, tuple[Conflict, str] | None]:
        """What an earlier user of pattern ``pa`` and a later one of pattern ``pb`` make:
        the dependency's kind (RAW before WAW before WAR) and the fuse-preventing edge
        (Def. 12 on this base's accesses, the reduction-result rule, a SYNC before a
        write of what it hands over, and a gather beside a write of its source), each or
        ``None``."""
        wi, ri, role_i, red_i, scan_i, gi = self.kinds[pa]
        wj, rj, role_j, _, _, gj = self.kinds[pb]
        kind = (
            Access.RAW if self._meets(wi, rj)
            else Access.WAW if self._meets(wi, wj)
            else Access.WAR if self._meets(ri, wj)
            else None
        )
        if role_i == "sync" and role_j not in _SYSTEM_ROLES and self._meets(ri, wj):
            # a kernel hands its SYNCs over when it ends, after the later write
            return kind, (Conflict.SYNC_THEN_WRITE, f"{self.name} is written after its SYNC")
        if role_i in _SYSTEM_ROLES or role_j in _SYSTEM_ROLES:
            return kind, None  # DEL and SYNC fuse with anything else
        if self._meets(gi, wj) or self._meets(wi, gj):
            # written before the gather (a later element not yet computed when an earlier
            # one is gathered) or after it (overwritten before a later gather reads it)
            return kind, (Conflict.GATHER_SOURCE, f"{self.name} is gathered from and written in one kernel")
        # a scan's value at an index is final once the kernel's pass reaches it: an
        # element-wise use at the same index may share its block (004 §4.2, scanomap)
        same_index_ok = scan_i and role_j == "elementwise"
        return kind, self._conflict(wi, ri, red_i, wj, rj, same_index_ok)

    def _conflict(self, wi: tuple[int, ...], ri: tuple[int, ...], red_i: str | None, wj: tuple[int, ...],
                  rj: tuple[int, ...], same_index_ok: bool) -> tuple[Conflict, str] | None:
        for o in wi:
            for x in rj + wj:
                if x != o and self._overlaps(x, o):
                    return Conflict.OVERLAP, f"{self._format(x)} overlaps {self._format(o)}"
                if red_i is not None and self._overlaps(x, o) and not (same_index_ok and x == o):
                    return Conflict.REDUCTION_RESULT, f"{red_i} result {self._format(o)} is used again"
        for o in wj:
            for x in ri:
                if x != o and self._overlaps(x, o):
                    return Conflict.OVERLAP, f"{self._format(o)} overlaps {self._format(x)}"
        return None


# --------------------------------------------------------------------------- partitions


def bit_indices(mask: int) -> Iterator[int]:
    """The indices of the set bits of ``mask``, lowest first (blocks and sets are bit masks).

    >>> list(bit_indices(0b10110))
    [1, 2, 4]
    """
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
        self.rank: dict[int, float] | None = _topological_ranks(self.succ)
        # reach[b]: the instructions of the blocks a path from b reaches (built on first use)
        self._reach: dict[int, int] | None = None

    def _summarise(self, b: int, mask: int) -> None:
        g = self.graph
        dom, opq, expl = None, False, 0
        idx = list(bit_indices(mask))
        for i in idx:
            dom = g.domain[i] if dom is None else dom  # the first, as BlockSummary's union keeps
            opq = opq or g.opaque[i]
            expl |= g.explicit_mask[i]
        self.domain[b], self.opaque[b], self.explicit[b] = dom, opq, expl
        self.first[b], self.last[b] = idx[0], idx[-1]

    # -- views of the state ------------------------------------------------------------
    def blocks(self) -> list[tuple[int, ...]]:
        """The blocks as sorted tuples of instruction indices, ordered by first instruction."""
        out = [tuple(bit_indices(m)) for m in self.members.values()]
        return sorted(out)

    def block(self, b: int) -> tuple[int, ...]:
        """The instructions of block ``b``."""
        return tuple(bit_indices(self.members[b]))

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
        other.rank = None if self.rank is None else dict(self.rank)
        other._reach = None if self._reach is None else dict(self._reach)
        return other

    def neighbours(self, b: int) -> set[int]:
        """Blocks joined to ``b`` by a dependency in either direction."""
        return self.succ[b] | self.pred[b]

    # -- Lemma 1 ------------------------------------------------------------------------
    def summary(self, b: int) -> BlockSummary:
        """Block ``b``'s :class:`~fusionlab.analysis.legality.BlockSummary` (the state keeps its fields
        per block, in ``members``, ``domain``, ``opaque`` and ``explicit``; ``opaque`` as a
        flag, whose ``True`` and ``False`` the inner loops test fastest, and the mask of the
        opaque instructions is found when asked)."""
        members = self.members[b]
        opaque = 0
        if self.opaque[b]:
            opaque_of = self.graph.opaque
            for i in bit_indices(members):
                if opaque_of[i]:
                    opaque |= 1 << i
        return BlockSummary(members, self.domain[b], opaque, self.explicit[b])

    def forbidden_between(self, b1: int, b2: int) -> tuple[Conflict, str] | None:
        """A fuse-preventing edge between the two blocks, with its reason, or ``None``:
        :func:`~fusionlab.analysis.legality.fusion_conflict` on their summaries."""
        return fusion_conflict(self.graph, self.summary(b1), self.summary(b2))

    def compatible(self, b1: int, b2: int) -> bool:
        """Whether :meth:`forbidden_between` is ``None``, without the explanation: a fast
        path for the algorithms' inner loops, the tests of
        :func:`~fusionlab.analysis.legality.fusion_conflict` on the state's columns (explicit edges
        are symmetric, so one direction of the mask test suffices)."""
        d1, d2 = self.domain[b1], self.domain[b2]
        if d1 is not None and d2 is not None and d1 != d2:
            return False
        if self.explicit[b1] & self.members[b2]:
            return False
        if self.opaque[b1] or self.opaque[b2]:
            o1, o2 = self.opaque[b1], self.opaque[b2]
            return not ((o1 and (d2 is not None or o2)) or (o2 and d1 is not None))
        return True

    def first_compatible(self, b: int, blocks: list[int], start: int, skip: set[int]) -> int | None:
        """The first index ``j >= start`` of ``blocks`` whose block is :meth:`compatible`
        with ``b`` and not in ``skip``, or ``None`` (a scan's inner loop: :meth:`compatible`
        inlined, a fast path of :func:`~fusionlab.analysis.legality.fusion_conflict`)."""
        d1, e1, o1 = self.domain[b], self.explicit[b], self.opaque[b]
        domain, opaque, members = self.domain, self.opaque, self.members
        for j in range(start, len(blocks)):
            x = blocks[j]
            if x in skip:
                continue
            d2 = domain[x]
            if d1 is not None and d2 is not None and d1 != d2:
                continue
            if e1 & members[x]:
                continue
            o2 = opaque[x]
            if (o1 or o2) and ((o1 and (d2 is not None or o2)) or (o2 and d1 is not None)):
                continue
            return j
        return None

    def long_path(self, b1: int, b2: int) -> list[int] | None:
        """A path ``b1 -> x -> ... -> b2`` of length >= 2 in the partition graph, or ``None``.

        A path only climbs in :attr:`rank` (a topological order kept through merges), so
        none exists when ``b2`` ranks below ``b1``, and a search stays between the two
        ranks. It searches from the end with fewer edges (backwards from ``b2`` when it has
        fewer predecessors than ``b1`` has successors) until it meets a neighbour of the
        other end: a block that thousands depend on costs nothing when the other end is
        small. (Program order cannot prune it: blocks may interleave, and an edge
        ``X -> Y`` only says that some instruction of ``X`` precedes some of ``Y``.)
        """
        rank = self.rank
        lo, hi = -math.inf, math.inf
        if rank is not None:
            lo, hi = rank[b1], rank[b2]
            if lo >= hi:
                return None
        forward = len(self.succ[b1]) <= len(self.pred[b2])
        start, goal = (b1, b2) if forward else (b2, b1)
        step = self.succ if forward else self.pred
        # the neighbours of the far end through which a path must arrive
        targets = self.pred[b2] if forward else self.succ[b1]
        came: dict[int, int] = {}
        stack = []
        for x in step[start]:
            if x != goal and (rank is None or lo < rank[x] < hi):
                came[x] = start
                stack.append(x)
        while stack:
            x = stack.pop()
            if x in targets:
                path = [x]
                while path[-1] != start:
                    path.append(came[path[-1]])
                path.reverse()  # start ... x
                full = path + [goal]
                return full if forward else full[::-1]
            for y in step[x]:
                if y in came or y == start or y == goal:
                    continue
                if rank is not None and not lo < rank[y] < hi:
                    continue
                came[y] = x
                stack.append(y)
        return None

    def reaches(self, b1: int, b2: int) -> bool:
        """Whether a dependency path leads from block ``b1`` to block ``b2``."""
        reach = self.reach_masks()
        if reach is not None:
            return bool(reach[b1] & self.members[b2])
        return b2 in self.succ[b1] or self.long_path(b1, b2) is not None

    def has_long_path(self, b1: int, b2: int) -> bool:
        """Whether :meth:`long_path` finds a path, answered from :meth:`reach_masks`: a
        big-integer test, and a look at ``b1``'s successors (or ``b2``'s predecessors,
        whichever are fewer) when ``b2`` is one of them."""
        reach = self.reach_masks()
        if reach is None:
            return self.long_path(b1, b2) is not None
        target = self.members[b2]
        if not reach[b1] & target:
            return False
        if b2 not in self.succ[b1]:
            return True  # reached, and not by the edge alone
        # the edge b1 -> b2 is there: is some other successor of b1 an ancestor of b2?
        if len(self.succ[b1]) <= len(self.pred[b2]):
            return any(x != b2 and reach[x] & target for x in self.succ[b1])
        source = reach[b1]
        return any(x != b1 and source & self.members[x] for x in self.pred[b2])

    def reach_masks(self) -> dict[int, int] | None:
        """Per block, the bit mask of the instructions of every block a dependency path
        from it reaches (its transitive closure), or ``None`` when the blocks make a cycle.

        Built on first use in reverse topological order, then kept through merges
        (:meth:`_grow_reach`); masks of instructions, not of block ids, stay valid when
        blocks merge.
        """
        if self._reach is None and self.rank is not None:
            reach: dict[int, int] = {}
            members = self.members
            for b in sorted(self.members, key=self.rank.__getitem__, reverse=True):
                mask = 0
                for y in self.succ[b]:
                    mask |= members[y] | reach[y]
                reach[b] = mask
            self._reach = reach
        return self._reach

    def _grow_reach(self, b1: int, b2: int, z: int) -> None:
        """Keep :meth:`reach_masks` exact after an acyclic merge of ``b1`` and ``b2`` into ``z``.

        Every new path goes through ``z``, so ``z`` reaches what either block reached, and
        a block that reached either now reaches ``z`` and all it reaches. Those blocks are
        ``z``'s ancestors; the walk up from ``z`` stops at a block that already reaches all
        of it, since everything above such a block does too (the masks are closed).
        """
        reach = self._reach
        assert reach is not None
        members = self.members
        mask = (reach.pop(b1) | reach.pop(b2)) & ~members[z]
        reach[z] = mask
        gain = mask | members[z]
        stack = list(self.pred[z])
        while stack:
            p = stack.pop()
            old = reach[p]
            if old | gain != old:
                reach[p] = old | gain
                stack.extend(self.pred[p])

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
        """Whether :meth:`merge_problem` is ``None`` (Lemma 1 without the explanation, from
        the fast paths :meth:`compatible` and :meth:`has_long_path`)."""
        return (
            b1 != b2
            and self.compatible(b1, b2)
            and not self.has_long_path(b1, b2)
            and not self.has_long_path(b2, b1)
        )

    def merge_problem(self, b1: int, b2: int) -> tuple[IllegalMerge, str] | None:
        """Lemma 1: ``None`` when merging ``b1`` and ``b2`` keeps the partition legal,
        else the reason and a human-readable detail: the fusion rule
        (:func:`~fusionlab.analysis.legality.fusion_conflict`, ``FORBIDDEN``), then a path of length
        >= 2 between the blocks (``CYCLE``)."""
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

    def merge(self, b1: int, b2: int, *, reuse: bool = False) -> int:
        """Contract blocks ``b1`` and ``b2`` (no legality check); returns the merged block's id.

        The merged block gets a new id, unless ``reuse``: then it keeps the id of the block
        with more instructions, and only the smaller block's instructions and neighbours are
        relabelled (a block that keeps growing costs its new part, not its size, each time).
        """
        if reuse:
            big, small = (b1, b2) if self.members[b1].bit_count() >= self.members[b2].bit_count() else (b2, b1)
            z = big
        else:
            big, small = b1, b2
            z = self._next_id
            self._next_id += 1
        m_small = self.members.pop(small)
        m_big = self.members.pop(big)
        self.members[z] = m_big | m_small
        for i in bit_indices(m_small if reuse else m_big | m_small):
            self.block_of[i] = z
        succ_small, pred_small = self.succ.pop(small), self.pred.pop(small)
        succ = self.succ.pop(big)
        succ |= succ_small
        succ -= {b1, b2}
        pred = self.pred.pop(big)
        pred |= pred_small
        pred -= {b1, b2}
        self.succ[z], self.pred[z] = succ, pred
        # the neighbours to relabel: with ``reuse`` only the smaller block's (the larger's
        # already name ``z``), so a growing block costs its new part's neighbours, not all
        for x in (succ_small - {b1, b2}) if reuse else succ:
            p = self.pred[x]
            p.discard(b1)
            p.discard(b2)
            p.add(z)
        for x in (pred_small - {b1, b2}) if reuse else pred:
            q = self.succ[x]
            q.discard(b1)
            q.discard(b2)
            q.add(z)
        d1, d2 = self.domain.pop(b1), self.domain.pop(b2)
        self.domain[z] = d2 if d1 is None else d1
        o1, o2 = self.opaque.pop(b1), self.opaque.pop(b2)
        self.opaque[z] = o1 or o2
        self.explicit[z] = self.explicit.pop(b1) | self.explicit.pop(b2)
        self.first[z] = min(self.first.pop(b1), self.first.pop(b2))
        self.last[z] = max(self.last.pop(b1), self.last.pop(b2))
        if self.rank is not None:
            self._rerank(b1, b2, z)
        if self.rank is None:
            self._reach = None  # a cycle: no closure to keep (long_path searches instead)
        elif self._reach is not None:
            self._grow_reach(b1, b2, z)
        return z

    def _rerank(self, b1: int, b2: int, z: int) -> None:
        """Keep ``rank`` a topological order after ``b1`` and ``b2`` became ``z``.

        ``z`` takes the lower of the two ranks; its predecessors ranked above it are edges
        inserted against the order, repaired at once as in Pearce and Kelly's dynamic
        topological sort: the nodes those predecessors come from and the nodes ``z`` leads
        to, between the two ranks, swap their slots (the former first). A merge that makes
        a cycle (``merge`` does not check legality) drops the ranks.
        """
        rank = self.rank
        assert rank is not None
        bottom = min(rank.pop(b1), rank.pop(b2))
        rank[z] = bottom
        late = [a for a in self.pred[z] if rank[a] > bottom]
        if not late:
            return
        top = max(rank[a] for a in late)
        forward, stack = {z}, [z]
        while stack:
            x = stack.pop()
            for y in self.succ[x]:
                if rank[y] <= top and y not in forward:
                    forward.add(y)
                    stack.append(y)
        backward, stack = set(late), list(late)
        while stack:
            x = stack.pop()
            for y in self.pred[x]:
                if rank[y] > bottom and y not in backward:
                    backward.add(y)
                    stack.append(y)
        if forward & backward or any(a in forward for a in late):
            self.rank = None  # a cycle: no order exists
            return
        order = sorted(backward, key=rank.__getitem__) + sorted(forward, key=rank.__getitem__)
        slots = sorted(rank[x] for x in order)
        for x, slot in zip(order, slots):
            rank[x] = slot


def partition_problems(graph: WSPGraph, blocks: Iterable[Iterable[int]], *, limit: int = 20,
                       budget: Budget | None = None) -> list[str]:
    """Why a partition is illegal (Def. 5): forbidden pairs inside blocks, a cycle between
    blocks, instructions missing or repeated. An empty list means legal.

    A block is first tested as a whole (the fusion rule folded over its instructions, in
    time linear in its size); only a block that fails
    is searched pair by pair, and at most ``limit`` pairs are listed (then a count of the
    rest). ``budget`` is checked while pairs are listed.

    >>> from fusionlab.ir.examples import fig3
    >>> g = WSPGraph(fig3())
    >>> partition_problems(g, [range(17)])[0]
    'instructions 1 and 3 share a block: different iteration shapes ((4,) vs (5,))'
    >>> partition_problems(g, [range(17)], limit=2)[-1]
    '... and 20 more pairs of instructions that may not share a block'
    """
    budget = UNLIMITED if budget is None else budget
    blocks = [sorted(set(b)) for b in blocks]
    seen = sorted(i for b in blocks for i in b)
    if seen != list(range(graph.n)):
        missing = sorted(set(range(graph.n)) - set(seen))
        return [f"every instruction must be in exactly one block (missing {[m + 1 for m in missing]}, "
                f"or repeated)"]
    problems: list[str] = []
    more = 0
    for b in blocks:
        if _block_is_fusible(graph, b):
            continue
        for x in range(len(b)):
            budget.check("legality")
            for y in range(x + 1, len(b)):
                got = graph.forbidden(b[x], b[y])
                if got is None:
                    continue
                if len(problems) < limit:
                    problems.append(
                        f"instructions {b[x] + 1} and {b[y] + 1} share a block: {got[0].value} ({got[1]})"
                    )
                else:
                    more += 1
    if more:
        problems.append(f"... and {more} more pairs of instructions that may not share a block")
    state = PartitionState(graph, blocks)
    cycle = find_cycle(state.succ)
    if cycle:
        label = " -> ".join("{" + ",".join(str(i + 1) for i in state.block(b)) + "}" for b in cycle)
        problems.append(f"the blocks depend on each other in a cycle: {label}")
    return problems


def _block_is_fusible(graph: WSPGraph, block: list[int]) -> bool:
    """Whether no fuse-preventing edge joins two instructions of ``block``:
    :func:`~fusionlab.analysis.legality.first_conflict` over its one-instruction blocks, in time
    linear in its size (each instruction is tested against the union of those before it)."""
    unit = graph.unit
    return first_conflict(graph, [unit(i) for i in block]) is None


def _topological_ranks(succ: dict[int, set[int]]) -> dict[int, float] | None:
    """A rank per block that grows along every dependency edge (``None`` on a cycle)."""
    indegree = {b: 0 for b in succ}
    for b, targets in succ.items():
        for y in targets:
            indegree[y] += 1
    ready = sorted(b for b, d in indegree.items() if d == 0)
    rank: dict[int, float] = {}
    while ready:
        b = ready.pop()
        rank[b] = float(len(rank))
        for y in succ[b]:
            indegree[y] -= 1
            if indegree[y] == 0:
                ready.append(y)
    return rank if len(rank) == len(succ) else None


def reachability(succ: list[list[int]] | list[set[int]], budget: Budget | None = None,
                 phase: str = "reachability") -> list[int]:
    """For each node of a DAG, the bit mask of the nodes a path of length >= 1 reaches.

    ``budget`` is checked once per node (each costs a few big-integer unions)."""
    budget = UNLIMITED if budget is None else budget
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
        budget.check(phase)
        for y in succ[x]:
            reach[x] |= (1 << y) | reach[y]
    return reach


def find_cycle(succ: dict[int, set[int]]) -> list[int] | None:
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
