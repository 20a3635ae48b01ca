"""A driver's repeated statements folded into loops over tables of their integers.

A driver (:mod:`fusionlab.backend.numba.driver`) is straight-line code: one statement per kernel
call, slot binding, zeroing or copy. A program whose Python loop makes hundreds of batches
(Gaussian elimination, LU: one batch per column) repeats the same few statements batch
after batch, differing only in integers — the views' offsets and extents, which kernels
take as arguments, the rows of the new arrays. :func:`fold` finds such repetitions and
writes each as one loop over a table, an ``int64`` array passed to the driver, whose rows
are the repetitions and whose columns are the integers of the loop's body:

.. code-block:: python

    for _i in range(len(tab0)):
        _t = tab0[_i]
        k_3f2a(A[_t[0]:_t[1]], np.uint64(_t[2]))

So the driver's source — what Numba compiles, and the cache's key — grows with the
distinct statements, not with the calls, and holds none of the tables' values: two runs
that differ only in offsets share one compiled driver and pass different tables. Every
integer of a folded statement goes into the table, except the zero of a zero fill
(``x[:] = 0``: the array's type decides what it stores). Comments are not compared: the
loop keeps the first repetition's.

Examples
--------
>>> lines = ["k(A[0:10], np.uint64(10))  # block [1]", "k(A[10:20], np.uint64(10))  # block [2]",
...          "k(A[20:30], np.uint64(10))  # block [3]", "B[:] = 0"]
>>> folded = fold(lines)
>>> print("\\n".join(folded.lines))
for _i in range(len(tab0)):
    _t = tab0[_i]
    k(A[_t[0]:_t[1]], np.uint64(_t[2]))  # block [1]
B[:] = 0
>>> folded.tables
(((0, 10, 10), (10, 20, 10), (20, 30, 10)),)
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Sequence

__all__ = ["Folded", "fold", "MAX_PERIOD", "TABLE_NAME"]

#: The longest repeated stretch looked for, in statements: a batch of Gauss elimination or
#: LU is under 20; the search's cost grows with it (each position tries every period that
#: starts with the same statement).
MAX_PERIOD = 256

#: Tables are named ``tab0, tab1, ...``; the loop's index and row are ``_i`` and ``_t``,
#: names the driver never gives an array (those start with a letter).
TABLE_NAME = "tab"

# an integer literal that is not part of a name (s0, k_3f2a) or of a float (2.0, and the
# exponent of 1e-05: a kernel's float constants are written into its call)
_INT = re.compile(r"(?<![\w.])(?<!\de[-+])\d+(?![\w.])")
_ZERO_FILL = re.compile(r"\[:\] = 0$")


@dataclass(frozen=True)
class Folded:
    """A driver body with its repetitions folded: the lines (indented relative to the
    body) and each loop's table (rows of integers, one row per repetition)."""

    lines: tuple[str, ...]
    tables: tuple[tuple[tuple[int, ...], ...], ...]
    #: statements of the folded body (a loop's body counted once), and kernel calls in it
    statements: int
    call_sites: int


@dataclass(frozen=True)
class _Statement:
    template: str        # the code with its integers as \x00 (the comment dropped)
    values: tuple[int, ...]
    comment: str

    def code(self, holes: Sequence[str] | None = None) -> str:
        if self.template.startswith("#"):
            return f"# {self.comment}"
        parts = self.template.split("\x00")
        fill = [str(v) for v in self.values] if holes is None else list(holes)
        text = parts[0] + "".join(f + p for f, p in zip(fill, parts[1:]))
        return f"{text}  # {self.comment}" if self.comment else text


def _parse(line: str) -> _Statement:
    code, _, comment = line.partition("#")
    code = code.rstrip()
    keep_last = bool(_ZERO_FILL.search(code))   # the fill's zero: not a table entry
    spans = list(_INT.finditer(code))
    if keep_last:
        spans = spans[:-1]
    template, values, at = [], [], 0
    for m in spans:
        template.append(code[at:m.start()])
        values.append(int(m.group()))
        at = m.end()
    template.append(code[at:])
    text = "\x00".join(template)
    if not code:   # a comment line: compared without its numbers ("batch 3" is "batch 4")
        text = "#" + _INT.sub("", comment.strip())
        values = []
    return _Statement(text, tuple(values), comment.strip())


def _best_run(ids: Sequence[int], pos: int, starts: Sequence[int], max_period: int) -> tuple[int, int]:
    """The period and repetitions of the longest run of repetitions starting at ``pos``
    (``starts``: the positions of ``ids[pos]``, sorted); (0, 0) if none saves a statement."""
    best = (0, 0, 0)   # statements saved, period, repetitions
    n = len(ids)
    k = bisect.bisect_right(starts, pos)
    while k < len(starts) and starts[k] - pos <= max_period:
        period = starts[k] - pos
        k += 1
        if pos + 2 * period > n:
            break
        seg = ids[pos:pos + period]
        reps = 1
        while pos + (reps + 1) * period <= n and ids[pos + reps * period:pos + (reps + 1) * period] == seg:
            reps += 1
        saved = (reps - 1) * period
        if saved > best[0]:
            best = (saved, period, reps)
    # a loop costs two statements of its own (its header and its row), but one call site
    # in place of three is what shortens the compilation
    return (best[1], best[2]) if best[0] >= 2 else (0, 0)


def fold(lines: Sequence[str], max_period: int = MAX_PERIOD, first_table: int = 0) -> Folded:
    """Fold the repeated stretches of ``lines`` (a driver's body, one statement a line,
    unindented) into loops over tables; see the module notes."""
    stmts = [_parse(line) for line in lines]
    kinds: dict[str, int] = {}
    ids = [kinds.setdefault(s.template, len(kinds)) for s in stmts]
    where: dict[int, list[int]] = {}
    for pos, i in enumerate(ids):
        where.setdefault(i, []).append(pos)
    out: list[str] = []
    tables: list[tuple[tuple[int, ...], ...]] = []
    statements = calls = 0
    pos = 0
    while pos < len(stmts):
        period, reps = _best_run(ids, pos, where[ids[pos]], max_period)
        if not period:
            out.append(stmts[pos].code())
            statements += 1
            calls += _is_call(stmts[pos])
            pos += 1
            continue
        body = stmts[pos:pos + period]
        rows = tuple(tuple(v for s in stmts[pos + r * period:pos + (r + 1) * period] for v in s.values)
                     for r in range(reps))
        name = f"{TABLE_NAME}{first_table + len(tables)}"
        tables.append(rows)
        out.append(f"for _i in range(len({name})):")
        out.append(f"    _t = {name}[_i]")
        col = 0
        for s in body:
            holes = [f"_t[{col + j}]" for j in range(len(s.values))]
            col += len(s.values)
            out.append(f"    {s.code(holes)}")
            calls += _is_call(s)
        statements += period + 2
        pos += period * reps
    return Folded(tuple(out), tuple(tables), statements, calls)


def _is_call(s: _Statement) -> bool:
    return s.template.startswith("k_")
