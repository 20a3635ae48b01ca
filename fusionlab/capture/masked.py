"""Masked assignment of selected values, ``a[m] = f(b[m], c[m])``, as an element-wise WHERE.

NumPy runs ``x[low] = -x[low]`` as a selection (COMPRESS), a map on the selected values and
a scatter back. The scatter has no element-wise form, but the whole statement has one:
maps commute with a selection (``f(compress(b, m)) == compress(f(b), m)``) and assigning a
selection back under the same mask is ``where(m, f(b), a)``. Capture is eager, so by the
time ``__setitem__`` runs the selection and the map are already recorded; this module reads
them back from the open batch (:func:`expand_selection`), so that the caller can emit the
same maps on the unselected arrays followed by one WHERE, and drops the selection chain
once it is dead (:func:`drop_superseded`), so the program never allocates it.

The values where the mask is false are computed too and thrown away, as any WHERE does;
where it is true they are bit-for-bit the values NumPy assigns (the same operations on the
same operands, in the same dtypes).

Everything here reads instructions only: no traced arrays, no NumPy.
"""

from __future__ import annotations

import bisect

from dataclasses import dataclass
from typing import Sequence

from fusionlab.ir.bytecode import Instruction, Literal, Opcode, OpFamily, View

#: how far back in the open batch a selection is looked for, and how many maps an
#: expansion may hold: past either, the assignment stays an OPAQUE indexed assignment
WINDOW = 4096
MAX_NODES = 64


@dataclass(frozen=True)
class Expansion:
    """One map to emit on unselected data: ``opcode`` with ``inputs`` (views read as they
    are at the end of the batch, literals, or other expansions), giving ``shape`` and
    ``dtype``; ``replaces`` is the position of the recorded instruction it stands for.
    """

    opcode: Opcode
    attrs: tuple[tuple[str, object], ...]
    inputs: tuple["View | Literal | Expansion", ...]
    shape: tuple[int, ...]
    dtype: str
    replaces: int


@dataclass
class _Search:
    batch: Sequence[Instruction]
    start: int                      # first position the search may look at
    mask: View
    unsafe: frozenset[str]          # bases whose memory the program does not own (escaped)
    nodes: int = 0
    replaced: list[int] | None = None

    def last_writer(self, base: str, before: int) -> int | None:
        for j in range(before - 1, self.start - 1, -1):
            ins = self.batch[j]
            if any(v.base.name == base for v in ins.outputs):
                return None if ins.opcode is Opcode.DEL else j
        return None

    def unchanged(self, base: str, after: int, until: int | None = None) -> bool:
        """Whether nothing writes or frees ``base`` after position ``after`` (and before
        ``until``, the end of the batch by default)."""
        return base not in self.unsafe and not any(
            v.base.name == base for ins in self.batch[after + 1:until] for v in ins.outputs)

    def same_mask(self, mask: View, at: int) -> bool:
        """Whether ``mask`` as it was before position ``at`` holds what the assignment's
        mask holds at the end: the same view unchanged since, or two masks computed alike
        (``a[a > 0] = np.sqrt(a[a > 0])`` computes ``a > 0`` twice) from operands that did
        not change between the two."""
        if mask == self.mask:
            return self.unchanged(mask.base.name, at - 1)
        a = self.last_writer(mask.base.name, at)
        b = self.last_writer(self.mask.base.name, len(self.batch))
        if a is None or b is None or not self.unchanged(self.mask.base.name, b):
            return False
        first, second = self.batch[a], self.batch[b]
        lo, hi = min(a, b), max(a, b)
        alike = (first.opcode is second.opcode and first.opcode in OpFamily.ELEMENTWISE
                and first.attrs == second.attrs and first.inputs == second.inputs
                and first.outputs == (mask,) and mask == _full(mask)
                and second.outputs == (self.mask,) and self.mask == _full(self.mask)
                and all(self.unchanged(x.base.name, lo, hi + 1) for x in first.views_in))
        if alike and self.replaced is not None:
            self.replaced.append(a)  # the selection's own mask: dead too, unless read elsewhere
        return alike

    def spend(self) -> bool:
        self.nodes += 1
        return self.nodes <= MAX_NODES


def expand_selection(batch: Sequence[Instruction], value: View, mask: View,
                     unsafe: frozenset[str] = frozenset()) -> "tuple[Expansion | View, tuple[int, ...]] | None":
    """The unselected form of ``value``: an expression over whole arrays, valid at the end
    of ``batch``, whose selection by ``mask`` equals ``value``; with the positions of the
    recorded instructions it makes dead once the caller stops reading ``value``.

    ``None`` when ``value`` is not a chain of element-wise maps over selections by exactly
    ``mask`` (and broadcast scalars), when an array it reads changed since, or when the
    chain is out of reach (``WINDOW``, ``MAX_NODES``).

    Examples
    --------
    >>> from fusionlab.ir.bytecode import Base
    >>> x, m = Base("x", "float64", (8,)), Base("m", "bool", (8,))
    >>> t, u = Base("t", "float64", (3,)), Base("u", "float64", (3,))
    >>> batch = [Instruction(Opcode.COMPRESS, (t.view(),), (x.view(), m.view())),
    ...          Instruction(Opcode.NEGATIVE, (u.view(),), (t.view(),))]
    >>> got, dead = expand_selection(batch, u.view(), m.view())
    >>> got.opcode.name, got.inputs, got.shape, dead
    ('NEGATIVE', (View(x),), (8,), (0, 1))
    >>> expand_selection(batch + [Instruction(Opcode.COPY, (x.view(),), (Literal(0.0),))], u.view(), m.view())
    """
    search = _Search(batch, max(0, len(batch) - WINDOW), mask, unsafe, replaced=[])
    got = _selected(search, value, len(batch))
    if got is None or isinstance(got, View):
        return None  # a value that is no map of a selection: nothing to rewrite
    return got, tuple(search.replaced or ())


def _selected(s: _Search, view: View, at: int) -> "Expansion | View | None":
    """Whole-array form of ``view`` (selection space) as it was before position ``at``."""
    j = s.last_writer(view.base.name, at)
    if j is None or not s.spend():
        return None
    ins = s.batch[j]
    if ins.outputs != (view,) or view != _full(view):
        return None
    if ins.opcode is Opcode.COMPRESS:
        data, mask = ins.inputs
        if not isinstance(data, View) or data.shape != s.mask.shape or not isinstance(mask, View) or \
                not s.same_mask(mask, j):
            return None
        got = _whole(s, data, j)
        if got is not None and s.replaced is not None:
            s.replaced.append(j)
        return got
    if ins.opcode not in OpFamily.ELEMENTWISE:
        return None
    inputs: list[View | Literal | Expansion] = []
    for x in ins.inputs:
        if isinstance(x, Literal):
            inputs.append(x)
            continue
        # a one-element operand broadcasts over the selection and over the whole array alike
        got = _whole(s, x, j) if x.size == 1 and x.shape != view.shape else _selected(s, x, j)
        if got is None:
            return None
        inputs.append(got)
    if s.replaced is not None:
        s.replaced.append(j)
    return Expansion(ins.opcode, ins.attrs, tuple(inputs), s.mask.shape, view.dtype, j)


def _whole(s: _Search, view: View, at: int) -> "Expansion | View | None":
    """``view`` as it was before position ``at``, read at the end of the batch: the view
    itself when nothing changed it since, else the maps that made it, recomputed."""
    if s.unchanged(view.base.name, at - 1):
        return view
    j = s.last_writer(view.base.name, at)
    if j is None or not s.spend():
        return None
    ins = s.batch[j]
    if ins.opcode not in OpFamily.ELEMENTWISE or ins.outputs != (view,) or view != _full(view):
        return None
    inputs: list[View | Literal | Expansion] = []
    for x in ins.inputs:
        got = x if isinstance(x, Literal) else _whole(s, x, j)
        if got is None:
            return None
        inputs.append(got)
    if s.replaced is not None:
        s.replaced.append(j)   # recomputed: the original is dead too unless something else reads it
    return Expansion(ins.opcode, ins.attrs, tuple(inputs), view.shape, view.dtype, j)


def _full(view: View) -> View:
    return view.base.view()


def drop_superseded(batch: list[Instruction], superseded: set[int]) -> list[Instruction]:
    """``batch`` without the instructions of ``superseded`` (by ``id``) whose output nothing
    reads before it is freed in this batch, and without the DEL of a base none of whose
    writers is left. Instructions are looked at last first, so a chain goes at once.

    >>> from fusionlab.ir.bytecode import Base
    >>> x, t = Base("x", "float64", (4,)), Base("t", "float64", (4,))
    >>> neg = Instruction(Opcode.NEGATIVE, (t.view(),), (x.view(),))
    >>> free = Instruction(Opcode.DEL, (t.view(),))
    >>> [i.opcode.name for i in drop_superseded([neg, free], {id(neg)})]
    []
    >>> read = Instruction(Opcode.ADD_REDUCE, (Base("s", "float64", ()).view(),), (t.view(),), {"axis": None})
    >>> [i.opcode.name for i in drop_superseded([neg, read, free], {id(neg)})]
    ['NEGATIVE', 'ADD_REDUCE', 'DEL']
    """
    if not superseded or not any(id(ins) in superseded for ins in batch):
        return batch
    keep = [True] * len(batch)
    freed_at: dict[str, int] = {}
    for i, ins in enumerate(batch):
        if ins.opcode is Opcode.DEL:
            freed_at.setdefault(ins.outputs[0].base.name, i)
    # the instructions touching each base, and those reading it, listed once (in order):
    # scanning the batch for each freed base took 39 s at the close of 1,000 masked updates
    # (3,000 temporaries, 9,000 instructions), and scanning everything between a superseded
    # instruction and its base's DEL was quadratic when the selections lived on (kept in a
    # list freed at the end: 3.5 million reads() at 1,000 steps, four times as many per doubling)
    touches: dict[str, list[int]] = {}
    readers: dict[str, list[int]] = {}
    for k, ins in enumerate(batch):
        read = {v.base.name for v in ins.reads()}
        for name in {v.base.name for v in ins.outputs} | read:
            touches.setdefault(name, []).append(k)
        for name in read:
            readers.setdefault(name, []).append(k)
    for i in range(len(batch) - 1, -1, -1):
        ins = batch[i]
        if id(ins) not in superseded or len(ins.outputs) != 1:
            continue
        name = ins.outputs[0].base.name
        end = freed_at.get(name)
        if end is None or end < i:
            continue
        # only the base's own readers between the write and the DEL (bisected, not scanned)
        of = readers.get(name, [])
        if any(keep[k] for k in of[bisect.bisect_right(of, i):bisect.bisect_left(of, end)]):
            continue
        keep[i] = False
    for name, end in freed_at.items():
        before = [k for k in touches.get(name, ()) if k < end]
        if not any(keep[k] for k in before) and any(
                not keep[k] and batch[k].outputs[0].base.name == name for k in before):
            keep[end] = False
    return [ins for ins, k in zip(batch, keep) if k]
