"""Dead parts of element-wise writes: an instruction restricted to the part of its output
that something reads before it is overwritten.

A student's Jacobi sweep writes ``new = u.copy()``, then ``new[1:-1, 1:-1] = ...``, then
the four walls: every element the copy wrote is overwritten before anything reads it, yet
the copy is a pass over the whole grid, and its iteration shape (the grid) is not the
interior's, so it cannot even share the interior's kernel. :func:`drop_dead_writes`
restricts each element-wise instruction to the part of its output that may still be read:
when a later instruction overwrites a sub-view of it before any instruction reads that
part, the part is dead, and the earlier instruction is rewritten as the slabs of the rest
(the copy above: four walls after the interior, nothing after the walls). The runner does
this before partitioning (``pipeline/runner.py``), so the cost models and the partition see
the rewritten batch; the explorer shows the program as captured.

The rule, per element-wise instruction (docs/passes.md, "Dead parts of element-wise
writes"): its output view must be a box of its base (per-axis progressions, what basic
slicing makes); the instructions touching that base after it are walked in order. A read
that meets a part still written (the IR's exact overlap test) keeps that part whole; a
write of that base by an element-wise instruction whose view is a box kills the part it
covers, when that part is a box of the earlier output's index space and the rest stays at
most ``2 * rank`` slabs. The walk stops at an opaque instruction (it may read anything), a
SYNC or DEL of the base, when nothing is left to kill, or after :data:`WALK` instructions.
Every instruction left whole carries a :class:`DeadRefusal`.

Examples
--------
>>> from fusionlab import parse
>>> p = parse('''
... ARRAY u float64[6,6]
... ARRAY new float64[6,6]
... COPY new, u
... ADD new[1:-1, 1:-1], u[:-2, 1:-1], u[2:, 1:-1]
... COPY new[0], 1.0
... SYNC new
... ''')
>>> got = drop_dead_writes(p)
>>> print(got.program.to_text().split("\\n", 2)[2])
COPY new[5:], u[5:]
COPY new[1:-1, :-5], u[1:-1, :-5]
COPY new[1:-1, 5:], u[1:-1, 5:]
ADD new[1:-1, 1:-1], u[:-2, 1:-1], u[2:, 1:-1]
COPY new[0], 1.0
SYNC new
>>> got.decisions[0].refusal is None, got.decisions[0].killers
(True, (1, 2))
"""

from __future__ import annotations

import bisect
import enum
import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from fusionlab.support.budget import UNLIMITED, Budget
from fusionlab.ir.bytecode import Instruction, Literal, Opcode, OpFamily, Program, View
from fusionlab.passes.rewrites import Rewrite, RewriteKind, RewritePass

__all__ = ["DeadRefusal", "DeadDecision", "DeadWrites", "drop_dead_writes", "WALK", "rewrites_of"]

#: instructions touching a base walked after each candidate (a batch of thousands of
#: instructions over one array stays linear in its length)
WALK = 64

#: the families whose instructions write every element of their output view and read
#: nothing but their inputs: they may kill an earlier write (any other writer of the base
#: is taken to read what it writes)
OVERWRITERS: frozenset[Opcode] = OpFamily.ELEMENTWISE

Box = tuple[tuple[int, int], ...]   # per output dimension, [lo, hi) of the output's own indices


class DeadRefusal(enum.Enum):
    """Why an element-wise instruction keeps its whole output."""

    NOT_BOX = "its output view is not a box of its base (a reshape, a diagonal, a broadcast)"
    NOT_OVERWRITTEN = "nothing overwrites part of its output before the walk ends (a DEL, the batch's end, WALK)"
    READ_FIRST = "what it writes is read (a SYNC reads it all) before a later instruction overwrites it"
    PART_NOT_BOX = "the part overwritten is not a box of its output (a strided or scattered part): no slabs"
    TOO_MANY_PIECES = "the rest of its output would take more than 2 * rank slab views"
    OPAQUE = "an opaque instruction follows before any overwrite (it may read anything)"


@dataclass(frozen=True)
class DeadDecision:
    """One element-wise instruction's decision: ``index`` its 0-based position in the
    original program, ``pieces`` the views it still writes (empty: removed; its own output
    alone: unchanged), ``killers`` the later instructions whose overwrites made parts
    dead, ``refusal`` why it was left whole (``None``: rewritten)."""

    index: int
    output: str
    pieces: tuple[View, ...]
    killers: tuple[int, ...] = ()
    refusal: DeadRefusal | None = None
    detail: str = ""

    @property
    def rewritten(self) -> bool:
        return self.refusal is None


@dataclass(frozen=True)
class DeadWrites:
    """The rewritten program (the same object when nothing changed), every candidate's
    decision, and ``origin``: for each instruction of the new program, its position in the
    original."""

    program: Program
    decisions: tuple[DeadDecision, ...]
    origin: tuple[int, ...]

    @property
    def changed(self) -> bool:
        return any(d.rewritten for d in self.decisions)


def _box_axes(v: View) -> tuple[tuple[tuple[int, int, int], ...], tuple[int, ...]] | None:
    """Per base axis ``(start, step, count)`` and the base axis of each view dimension (-1:
    extent 1), when ``v`` is a box (the IR's own decomposition); else ``None``."""
    got = v._progressions   # noqa: SLF001 -- the IR's decomposition, exact for basic slicing
    if got is None or v.as_index() is None:
        return None
    return got


def _ceil_div(a: int, b: int) -> int:
    return -((-a) // b)


def _hits(s: int, c: int, n: int, prog: tuple[int, int, int]) -> tuple[int, int] | None | bool:
    """The ``i`` in ``[0, n)`` whose ``s + c*i`` lies on the progression ``prog``: ``(lo, hi)``
    when they are a range, ``None`` when there is none, ``False`` when they are spaced out."""
    t, e, m = prog
    if e == 0 or m <= 1:
        if c == 0 or (t - s) % c:
            return (0, n) if c == 0 and t == s else None
        i = (t - s) // c
        return (i, i + 1) if 0 <= i < n else None
    if e < 0:
        t, e = t + e * (m - 1), -e
    top = t + e * (m - 1)
    if c > 0:
        ilo, ihi = _ceil_div(t - s, c), (top - s) // c
    else:
        ilo, ihi = _ceil_div(top - s, c), (t - s) // c
    ilo, ihi = max(ilo, 0), min(ihi, n - 1)
    g = math.gcd(abs(c), e)
    if ilo > ihi or (t - s) % g:
        return None
    period = e // g
    i0 = ((t - s) // g * pow(c // g, -1, period)) % period if period > 1 else 0
    first, last = ilo + (i0 - ilo) % period, ihi - (ihi - i0) % period
    if first > last:
        return None
    return (first, last + 1) if period == 1 or first == last else False


def _dead_box(w: View, wax: tuple, v: View) -> tuple[Box | None, bool]:
    """The part of ``w`` (a box) that ``v`` overwrites, as a box of ``w``'s indices, and
    whether it is a box at all (``(None, True)``: no common element)."""
    vax = _box_axes(v)
    if vax is None:
        return None, False
    (wprog, wdims), vprog = wax, vax[0]
    mapped = set(wdims)
    for k, (s, _, _) in enumerate(wprog):   # the base axes w does not run along: one coordinate
        if k not in mapped and _hits(s, 1, 1, vprog[k]) is None:
            return None, True
    box = []
    for k in wdims:
        if k < 0:
            box.append((0, 1))
            continue
        s, c, n = wprog[k]
        hit = _hits(s, c, n, vprog[k])
        if hit is None:
            return None, True
        if hit is False:
            return None, False
        box.append(hit)
    return tuple(box), True


def _slabs(piece: Box, dead: Box) -> list[Box]:
    """``piece`` minus ``dead`` (a box inside it) as at most ``2 * rank`` disjoint slabs."""
    out = []
    for d, ((lo, hi), (a, b)) in enumerate(zip(piece, dead)):
        for part in ((lo, a), (b, hi)):
            if part[0] < part[1]:
                out.append(dead[:d] + (part,) + piece[d + 1:])
    return out


def _within(piece: Box, dead: Box) -> Box:
    return tuple((max(lo, a), min(hi, b)) for (lo, hi), (a, b) in zip(piece, dead))


def _view(w: View, box: Box) -> View:
    return w[tuple(slice(lo, hi) for lo, hi in box)]


def _restrict(ins: Instruction, box: Box) -> Instruction:
    """``ins`` (element-wise) on the part ``box`` of its output: each input cut alike along
    the dimensions it does not broadcast."""
    out = ins.outputs[0]
    inputs = []
    for x in ins.inputs:
        if isinstance(x, Literal):
            inputs.append(x)
            continue
        lead = out.ndim - x.ndim
        inputs.append(x[tuple(slice(None) if n == 1 else slice(*box[lead + d]) for d, n in enumerate(x.shape))])
    return Instruction(ins.opcode, (_view(out, box),), tuple(inputs), ins.attrs)


@dataclass(frozen=True)
class _Index:
    """Per base, the positions of the non-opaque instructions that read or write it, and the
    element-wise writes of it (position, first and last element); the positions of the
    opaque instructions (they may touch any base)."""

    touching: dict[str, tuple[int, ...]]
    writes: dict[str, tuple[tuple[int, int, int], ...]]
    opaque: tuple[int, ...]


def _index(program: Program) -> _Index:
    touching: dict[str, list[int]] = {}
    writes: dict[str, list[tuple[int, int, int]]] = {}
    opaque = []
    for j, ins in enumerate(program):
        if ins.opcode in OpFamily.OPAQUE:
            opaque.append(j)
            continue
        for name in {v.base.name for v in ins.outputs + ins.views_in}:
            touching.setdefault(name, []).append(j)
        if ins.opcode in OVERWRITERS and ins.outputs[0].size:
            writes.setdefault(ins.outputs[0].base.name, []).append((j, *ins.outputs[0].interval()))
    return _Index({k: tuple(v) for k, v in touching.items()}, {k: tuple(v) for k, v in writes.items()},
                  tuple(opaque))


def _after(index: _Index, w: View, i: int) -> list[int]:
    """The instructions after ``i`` that may touch ``w``'s base, in order, at most
    :data:`WALK`; none when no element-wise write among them meets ``w``'s interval (no walk
    can kill anything: a batch of thousands of row updates stays linear)."""
    touch = index.touching.get(w.base.name, ())
    later = list(touch[bisect.bisect_right(touch, i):][:WALK])
    writes = index.writes.get(w.base.name, ())
    lo, hi = w.interval()
    end = later[-1] if later else i
    for k in range(bisect.bisect_right(writes, (i, math.inf, math.inf)), len(writes)):
        j, a, b = writes[k]
        if j > end:
            return []
        if a <= hi and lo <= b:
            break
    else:
        return []
    first_opaque = next((j for j in index.opaque if j > i), None)
    if first_opaque is not None and first_opaque < end:   # the walk stops there: nothing after it is needed
        later = [j for j in later if j < first_opaque] + [first_opaque]
    return later


@dataclass
class _Parts:
    """The walk's state for one candidate: the parts of its output still written, whether a
    read has met each, the instructions that killed parts, the first reason a kill failed."""

    pieces: list[Box]
    pinned: list[bool]
    killers: list[int]
    why: DeadRefusal | None = None
    detail: str = ""
    views: dict[Box, View] = field(default_factory=dict)

    def view(self, w: View, box: Box) -> View:
        """The view of part ``box`` of ``w`` (made once: a walk tests each part many times)."""
        got = self.views.get(box)
        if got is None:
            got = self.views[box] = _view(w, box)
        return got

    def fail(self, why: DeadRefusal, j: int) -> None:
        if self.why is None:
            self.why, self.detail = why, f"instruction {j + 1}"

    @property
    def open(self) -> bool:
        return not all(self.pinned)


#: elements of a read that is no box, enumerated to test it against a part; above, any read
#: whose interval meets the part keeps it (conservative)
ENUMERATE = 1 << 20


def _meets(w: View, wax: tuple, box: Box, part: View, r: View) -> bool:
    """Whether ``r`` reads an element of the part ``box`` of ``w``: the IR's exact overlap
    test for a box; for another view (a diagonal) its elements, each checked against the
    part's per-axis progressions (linear in the read, where ``View.overlaps`` sorts both)."""
    if r.base != w.base or r.size == 0:
        return False
    if r._progressions is not None or part.size <= 64:   # noqa: SLF001 -- the IR's decomposition
        return part.overlaps(r)
    (plo, phi), (rlo, rhi) = part.interval(), r.interval()
    if phi < rlo or rhi < plo:
        return False
    if r.size > ENUMERATE:
        return True
    coords = np.unravel_index(r.indices().ravel(), w.base.shape)
    inside = np.ones(r.size, dtype=bool)
    (wprog, wdims) = wax
    runs = {k: box[d] for d, k in enumerate(wdims) if k >= 0}
    for k, (s, c, _) in enumerate(wprog):
        if k not in runs:
            inside &= coords[k] == s
            continue
        q, rem = np.divmod(coords[k] - s, c)
        inside &= (rem == 0) & (q >= runs[k][0]) & (q < runs[k][1])
    return bool(inside.any())


def _read(w: View, wax: tuple, parts: _Parts, reads: Sequence[View]) -> None:
    """Pin every part a read meets."""
    lo, hi = w.interval()
    reads = [r for r in reads if r.size and not (r.interval()[1] < lo or hi < r.interval()[0])]
    for k, p in enumerate(parts.pieces if reads else ()):
        if not parts.pinned[k] and any(_meets(w, wax, p, parts.view(w, p), r) for r in reads):
            parts.pinned[k] = True


def _overwrite(w: View, wax: tuple, parts: _Parts, v: View, j: int) -> None:
    """Kill what ``v`` (written whole by instruction ``j``) covers of the unpinned parts."""
    dead, is_box = _dead_box(w, wax, v)
    if dead is None and is_box:
        return
    pieces, pinned, killed = [], [], False
    for p, pin in zip(parts.pieces, parts.pinned):
        part = None if dead is None else _within(p, dead)
        meets = _meets(w, wax, p, parts.view(w, p), v) if part is None else all(lo < hi for lo, hi in part)
        if not meets or pin:
            if meets:
                parts.fail(DeadRefusal.READ_FIRST, j)
            pieces.append(p)
            pinned.append(pin)
            continue
        if part is None:
            parts.fail(DeadRefusal.PART_NOT_BOX, j)
            pieces.append(p)
            pinned.append(pin)
            continue
        rest = _slabs(p, part)
        pieces.extend(rest)
        pinned.extend([False] * len(rest))
        killed = True
    if len(pieces) > 2 * w.ndim:   # the rest would be too many thin kernels: keep the parts as they were
        parts.fail(DeadRefusal.TOO_MANY_PIECES, j)
        return
    if killed:
        parts.pieces, parts.pinned = pieces, pinned
        parts.killers.append(j)


def _decide(program: Program, i: int, index: _Index) -> tuple[DeadDecision, list[Box] | None]:
    """The decision for element-wise instruction ``i``, and its remaining parts when rewritten."""
    ins = program[i]
    w = ins.outputs[0]
    name = w.base.name
    wax = _box_axes(w)
    if wax is None:
        return DeadDecision(i, name, (w,), refusal=DeadRefusal.NOT_BOX), None
    parts = _Parts([tuple((0, n) for n in w.shape)], [False], [])
    for j in _after(index, w, i):
        other = program[j]
        if other.opcode in OpFamily.OPAQUE:
            parts.fail(DeadRefusal.OPAQUE, j)
            break
        if other.opcode is Opcode.SYNC:   # it reads the whole base
            parts.fail(DeadRefusal.READ_FIRST, j)
        if other.opcode in OpFamily.SYSTEM:   # a DEL ends the base
            break
        reads = [r for r in other.views_in if r.base.name == name]
        writes = [o for o in other.outputs if o.base.name == name]
        if other.opcode not in OVERWRITERS:   # it may read what it writes (a histogram adds into its bins)
            reads, writes = reads + writes, []
        _read(w, wax, parts, reads)
        for v in writes:
            _overwrite(w, wax, parts, v, j)
        if not parts.open:
            parts.fail(DeadRefusal.READ_FIRST, j)
        if not parts.pieces or not parts.open:
            break
    if not parts.killers:
        return DeadDecision(i, name, (w,), refusal=parts.why or DeadRefusal.NOT_OVERWRITTEN,
                            detail=parts.detail), None
    views = tuple(_view(w, p) for p in parts.pieces)
    return DeadDecision(i, name, views, tuple(parts.killers)), parts.pieces


def drop_dead_writes(program: Program, budget: Budget = UNLIMITED) -> DeadWrites:
    """Restrict each element-wise instruction to the parts of its output that are read
    before being overwritten (see the module's docstring); the program is returned
    unchanged (the same object) when nothing is dead.

    Each restricted instruction is replaced, in place, by one instruction per remaining
    part (none when all of it is dead); a removed part was overwritten before any read, so
    every read sees the value it saw, and each base ends with the values it ended with.
    ``budget`` is checked every few hundred instructions (:class:`BudgetExceeded` when it
    runs out: the explorer then lists no rewrite; ``run`` passes none).

    >>> from fusionlab import parse
    >>> p = parse("ARRAY a float64[8]\\nCOPY a, 0\\nCOPY a[2:5], 1.0\\nSYNC a")
    >>> got = drop_dead_writes(p)
    >>> [str(v) for v in got.decisions[0].pieces], got.origin
    (['View(a[:-6])', 'View(a[5:])'], (0, 0, 1, 2))
    """
    index = _index(program)
    decisions, new, origin = [], [], []
    for i, ins in enumerate(program):
        if i % 256 == 0:
            budget.check("dead writes")
        boxes = None
        if ins.opcode in OpFamily.ELEMENTWISE:
            decision, boxes = _decide(program, i, index)
            decisions.append(decision)
        for part in boxes if boxes is not None else [None]:
            new.append(ins if part is None else _restrict(ins, part))
            origin.append(i)
    if all(d.refusal is not None for d in decisions):
        return DeadWrites(program, tuple(decisions), tuple(range(len(program))))
    return DeadWrites(Program(program.bases, new), tuple(decisions), tuple(origin))


def rewrites_of(program: Program, result: DeadWrites, batch: int = 0, batches: int = 1) -> list[Rewrite]:
    """One record per instruction of ``program`` (batch ``batch`` of a run's ``batches``, from 0) that
    ``result`` (its :func:`drop_dead_writes`) rewrote: :attr:`~RewriteKind.WRITE_REMOVED` or
    :attr:`~RewriteKind.WRITE_RESTRICTED`, its line numbered from 1 as listings number them.

    >>> from fusionlab import parse
    >>> p = parse("ARRAY a float64[8]\\nCOPY a, 0\\nCOPY a[2:], 1.0\\nSYNC a")
    >>> [r] = rewrites_of(p, drop_dead_writes(p))
    >>> r.kind.name, r.batch, r.instruction, r.base
    ('WRITE_RESTRICTED', 0, 0, 'a')
    >>> r.describe()
    'batch 1: instruction 1 (COPY a, 0) restricted to a[:-6]: the rest is overwritten by instruction 2 before anything reads it'
    """
    from fusionlab.ir.text import format_instruction, format_view

    out = []
    for d in result.decisions:
        if d.refusal is not None:
            continue
        now = "removed: all of it" if not d.pieces else \
            "restricted to " + ", ".join(format_view(v) for v in d.pieces) + ": the rest"
        by = ", ".join(str(j + 1) for j in d.killers)
        line = (f"instruction {d.index + 1} ({format_instruction(program[d.index])}) {now} is overwritten "
                f"by instruction{'s' if len(d.killers) > 1 else ''} {by} before anything reads it")
        kind = RewriteKind.WRITE_RESTRICTED if d.pieces else RewriteKind.WRITE_REMOVED
        out.append(Rewrite(kind, batch, d.index, line, RewritePass.DEAD_WRITES, batches, d.output))
    return out
