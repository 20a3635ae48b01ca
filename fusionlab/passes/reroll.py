"""Rerolling: a run of instruction groups that a Python loop unrolled at capture, rewritten
into one group over views with one more axis.

A student's LU (``for i in range(k + 1, n): l[i, k] = u[i, k] / u[k, k];
u[i, k:] -= l[i, k] * u[k, k:]``) is captured one iteration at a time: the same few
instructions, again and again, over views whose offsets advance by a constant stride
(row ``i`` of ``u``, element ``(i, k)`` of ``l``), each iteration with its own temporaries.
:func:`reroll` finds such runs and writes each as one group: view ``u[i, k:]`` of
instance ``j`` becomes the 2-D view ``u[k+1:n, k:]``, the 0-d ``l[i, k]`` the column
``l[k+1:n, k]`` (broadcast over the row: a view of shape ``(m, 1)``), a view every instance
reads alike (``u[k, k:]``, the pivot) stays as it is (broadcast), and each temporary gets a
base with one more axis (one slot per instance).

Legality (docs/passes.md, "Rerolling"): the group runs instruction by instruction over
all instances at once, so the rewrite is made only when no instance reads or writes what
another instance of the run writes (an instance's own earlier writes are read as before);
tested exactly on the bytecode views (:meth:`~fusionlab.ir.bytecode.View.overlaps`, then the
elements themselves where two views meet). Every run left unrolled carries a
:class:`RerollRefusal`.

Examples
--------
>>> from fusionlab import parse
>>> p = parse('''
... ARRAY a float64[4,3]
... ARRAY r float64[3]
... ARRAY t0 float64[3]
... ARRAY t1 float64[3]
... ARRAY t2 float64[3]
... MULTIPLY t0, r, 2
... ADD a[1], a[1], t0
... DEL t0
... MULTIPLY t1, r, 2
... ADD a[2], a[2], t1
... DEL t1
... MULTIPLY t2, r, 2
... ADD a[3], a[3], t2
... DEL t2
... ''')
>>> got = reroll(p)
>>> print(got.program.to_text())
ARRAY a float64[4,3]
ARRAY r float64[3]
ARRAY t0 float64[3,3]
MULTIPLY t0, r, 2
ADD a[1:], a[1:], t0
DEL t0
>>> got.runs[0].describe()
'3 iterations of 3 instructions (captured 1-9) rerolled into instructions 1-3'

An iteration reading what the one before wrote is refused:

>>> q = parse('''
... ARRAY x float64[4]
... ADD x[1], x[1], x[0]
... ADD x[2], x[2], x[1]
... ADD x[3], x[3], x[2]
... ''')
>>> got = reroll(q)
>>> len(got.program), got.refusals[0].reason.name
(3, 'READS_OTHER_INSTANCE')
"""

from __future__ import annotations

import enum
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

import numpy as np

from fusionlab.support.budget import UNLIMITED, Budget, BudgetExceeded
from fusionlab.ir.bytecode import (
    Base, Instruction, Literal, Opcode, OpFamily, Program, ProgramError, View, check_instruction,
)
from fusionlab.passes.rewrites import Rewrite, RewriteKind, RewritePass

__all__ = ["RerollRefusal", "Rerolled", "Refused", "Reroll", "reroll", "reroll_batches", "MAX_PERIOD", "MAX_LEVELS",
           "MAX_ATTEMPTS", "MAX_CHECKED_ELEMENTS", "REROLL_SECONDS"]

#: the longest group (instructions per iteration) looked for
MAX_PERIOD = 64
#: passes over a program (each can reroll the groups of the pass before: nested loops)
MAX_LEVELS = 3
#: candidate runs tried at one position (most instructions covered first)
MAX_ACCEPT_TRIES = 3
#: seconds rerolling may take (cut to the caller's budget): past them the rest is explored, and
#: run, as captured, with a notice. A capped capture of 50,000 chained updates took 3.5 s to
#: refuse; a 9,000-iteration loop with a test per iteration, minutes (docs/explorer.md). The
#: explorer (fusionlab/explore/jupyter) and the runner's ``compare`` both give rerolling this much.
REROLL_SECONDS = 3.0
#: candidate runs checked per pass (each refused one costs a legality check): the budget
MAX_ATTEMPTS = 20_000
#: elements enumerated by one exact cross-instance test (views that meet, not progressions)
MAX_CHECKED_ELEMENTS = 1 << 22


class RerollRefusal(enum.Enum):
    """Why a run of repeated instruction groups stays unrolled."""

    NOT_ELEMENTWISE = "an instruction of the group is not element-wise (a reduction, a gather, a SYNC, ...)"
    MIXED_BASES = "an operand reads the same array in some iterations and another array in others"
    TEMPORARY_ESCAPES = "a temporary of one iteration is used outside it (read later or not freed in it)"
    IRREGULAR_OFFSETS = "the views' offsets do not advance by one constant stride per iteration"
    READS_OTHER_INSTANCE = "an iteration reads what another iteration writes (a dependency between iterations)"
    WRITES_OVERLAP = "two iterations write the same elements"
    LITERALS_DIFFER = ("a literal differs between iterations and cannot become an array of the values "
                       "(another dtype than the instruction's arrays, or a POWER's exponent)")
    NOT_DATA_PARALLEL = "a rerolled instruction would read a view overlapping its output without being it (Def. 11)"
    TOO_LARGE_TO_CHECK = f"the views meet and have more than {MAX_CHECKED_ELEMENTS} elements to compare"
    BUDGET = f"more than {MAX_ATTEMPTS} candidate runs in one pass (the pass's budget)"
    TIME_BUDGET = "rerolling stopped at its time budget: from here on the batch stays as captured"


@dataclass(frozen=True)
class Rerolled:
    """A run rewritten: ``count`` repetitions of ``length`` instructions from ``start``
    (0-based, in the program the pass read) became ``length`` instructions at ``at``."""

    start: int
    length: int
    count: int
    at: int
    level: int = 1

    def describe(self) -> str:
        """One line for the listing."""
        nested = f", pass {self.level}" if self.level > 1 else ""
        return (f"{self.count} iterations of {self.length} instructions (captured {self.start + 1}-"
                f"{self.start + self.count * self.length}{nested}) rerolled into instructions "
                f"{self.at + 1}-{self.at + self.length}")


@dataclass(frozen=True)
class Refused:
    """A run left unrolled, and why (``detail``: the views or arrays concerned)."""

    start: int
    length: int
    count: int
    reason: RerollRefusal
    detail: str = ""
    level: int = 1

    def describe(self) -> str:
        """One line for the listing."""
        return (f"{self.count} iterations of {self.length} instructions (captured {self.start + 1}-"
                f"{self.start + self.count * self.length}) not rerolled: {self.reason.value}"
                + (f" ({self.detail})" if self.detail else ""))


@dataclass(frozen=True)
class Reroll:
    """The pass's result: the rewritten ``program``, the runs rerolled and refused."""

    program: Program
    original: Program
    runs: tuple[Rerolled, ...] = ()
    refusals: tuple[Refused, ...] = ()
    #: the arrays of literals that differed between iterations, by base name: inputs of the run
    constants: dict[str, np.ndarray] = field(default_factory=dict, compare=False, hash=False)

    @property
    def changed(self) -> bool:
        """Whether any run was rerolled."""
        return bool(self.runs)

    def rewrites(self, batch: int = 0, batches: int = 1) -> list[Rewrite]:
        """The records for the listing (``batch``: this program's in the run, from 0, of
        ``batches``): the batch's length before and after (:attr:`~RewriteKind.REROLLED`),
        each first-pass run rerolled (at most 20, then :attr:`~RewriteKind.MORE_RUNS_REROLLED`),
        where the time budget stopped the pass (:attr:`~RewriteKind.BUDGET_CUT`), then the
        refusals counted by reason (:attr:`~RewriteKind.RUNS_NOT_REROLLED`).

        >>> from fusionlab import parse
        >>> p = parse("ARRAY x float64[3]\\nCOPY x[0], 1\\nCOPY x[1], 1\\nCOPY x[2], 1")
        >>> [(r.kind.name, r.instruction) for r in reroll(p).rewrites()]
        [('REROLLED', None), ('RUN_REROLLED', 0)]
        >>> [r.describe() for r in reroll(p).rewrites()]
        ['rerolled: 3 instructions -> 1', '3 iterations of 1 instructions (captured 1-3) rerolled into instructions 1-1']
        """
        def record(kind: RewriteKind, instruction: int | None, line: str) -> Rewrite:
            return Rewrite(kind, batch, instruction, line, RewritePass.REROLL, batches)

        first = [r for r in self.runs if r.level == 1]
        out = [record(RewriteKind.RUN_REROLLED, r.start, r.describe()) for r in first[:20]]
        if len(first) > 20:
            out.append(record(RewriteKind.MORE_RUNS_REROLLED, None, f"... and {len(first) - 20} more runs rerolled"))
        if self.runs:
            out.insert(0, record(RewriteKind.REROLLED, None,
                                 f"rerolled: {len(self.original)} instructions -> {len(self.program)}"))
        cut = next((r for r in self.refusals if r.reason is RerollRefusal.TIME_BUDGET), None)
        if cut is not None:
            out.append(record(RewriteKind.BUDGET_CUT, cut.start, (
                f"rerolling stopped at its time budget{f' ({cut.detail})' if cut.detail else ''} at "
                f"captured instruction {cut.start + 1}: the rest of the batch stays as captured "
                "(a larger --budget rerolls more; --no-reroll skips rerolling)")))
        by_reason = Counter(r.reason for r in self.refusals if r.reason is not RerollRefusal.TIME_BUDGET)
        for reason, n in by_reason.most_common():
            eg = next(r for r in self.refusals if r.reason is reason)
            out.append(record(RewriteKind.RUNS_NOT_REROLLED, eg.start, (
                f"{n} run{'s' if n != 1 else ''} not rerolled: {reason.value} "
                f"(e.g. {eg.count} iterations of captured instructions {eg.start + 1}-{eg.start + eg.length}"
                + (f": {eg.detail}" if eg.detail else "") + ")")))
        return out


def reroll(program: Program, *, max_levels: int = MAX_LEVELS, prefix: str = "lit",
           avoid: Iterable[str] = (), budget: Budget = UNLIMITED) -> Reroll:
    """Reroll every legal run of repeated instruction groups of ``program``, pass after
    pass (a pass can reroll the groups the one before made: nested loops) until a pass
    changes nothing or ``max_levels`` passes ran (the budget). Literals that differ between
    iterations become new arrays named ``prefix`` and a number (none of ``avoid``: the
    names of the other batches that share the inputs), handed to the run as inputs
    (:attr:`Reroll.constants`).

    ``budget`` is checked between candidate runs (and inside the scans of a long one):
    when it runs out, what was rerolled is kept, the rest of the program stays as
    captured, and a refusal of reason :attr:`RerollRefusal.TIME_BUDGET` says where it
    stopped (a spent budget leaves the program as captured).

    >>> from fusionlab import parse
    >>> p = parse("ARRAY x float64[3]\\nCOPY x[0], 1\\nCOPY x[1], 1\\nCOPY x[2], 1")
    >>> got = reroll(p)
    >>> got.program.to_text().splitlines()[-1], len(got.runs)
    ('COPY x, 1', 1)
    >>> cut = reroll(p, budget=Budget(0.0))
    >>> cut.program is p, cut.refusals[0].reason.name
    (True, 'TIME_BUDGET')
    """
    return _reroll(program, max_levels, prefix, set(avoid), budget)


def _reroll(program: Program, max_levels: int, prefix: str, taken: set[str], budget: Budget) -> Reroll:
    """:func:`reroll` adding the names it makes to ``taken`` (the batches of a capture
    share one set: copying the names of 4,545 batches for each took 10 s)."""
    runs: list[Rerolled] = []
    refusals: list[Refused] = []
    constants: dict[str, np.ndarray] = {}
    current = program
    for level in range(1, max_levels + 1):
        nxt, done, refused, lits = _one_pass(current, level, taken, prefix, budget)
        refusals.extend(refused)
        if not done:
            break   # the program as it was (the same object: callers key their caches on it)
        if refused and refused[-1].reason is RerollRefusal.TIME_BUDGET:
            runs.extend(done)
            constants.update(lits)
            current = nxt
            break
        runs.extend(done)
        constants.update(lits)
        current = nxt
    return Reroll(current, program, tuple(runs), tuple(refusals), constants)


def reroll_batches(batches: Sequence[Program], budget: Budget = UNLIMITED) -> list[Reroll]:
    r""":func:`reroll` of each batch of a capture; the arrays of literals are named
    ``lit<batch>_<n>``, apart from every array of every batch (the batches share one
    storage: their inputs are found by name). One ``budget`` for them all: the batches
    after it ran out stay as captured (each with a ``TIME_BUDGET`` refusal).

    >>> from fusionlab import parse
    >>> p = parse("ARRAY x float64[2]\nCOPY x[0], 1.5\nCOPY x[1], 2.5")
    >>> got = reroll_batches([p, p])
    >>> [sorted(r.constants) for r in got], got[1].program.to_text().splitlines()[-1]
    ([['lit0_0'], ['lit1_0']], 'COPY x, lit1_0')
    """
    taken = {b.name for p in batches for b in p.bases}
    return [_reroll(p, MAX_LEVELS, f"lit{k}_", taken, budget) for k, p in enumerate(batches)]


# --------------------------------------------------------------------------- finding runs


def _temporaries(program: Program) -> set[str]:
    """Bases freed in the program whose first access is a write: the candidates for a
    per-iteration temporary (each iteration's own array)."""
    first: dict[str, bool] = {}
    freed: set[str] = set()
    for ins in program:
        if ins.opcode is Opcode.DEL:
            freed.add(ins.outputs[0].base.name)
            continue
        for v in ins.views_in:
            first.setdefault(v.base.name, False)
        for v in ins.outputs:
            first.setdefault(v.base.name, True)
    return {name for name in freed if first.get(name)}


def _keys(program: Program) -> np.ndarray:
    """An integer per instruction, equal for instructions alike up to view offsets and the
    identity of temporaries (the same shape and dtype)."""
    temps = _temporaries(program)
    ids: dict[Any, int] = {}

    def operand(x: Any) -> Any:
        if isinstance(x, Literal):   # values may differ: an array of them (:func:`_literal_slots`)
            return ("lit", type(x.value).__name__)
        b = x.base
        tag = ("tmp", b.shape, b.dtype) if b.name in temps else b.name
        return (tag, x.shape, x.strides)

    out = np.empty(len(program), dtype=np.int64)
    for n, ins in enumerate(program):
        key = (ins.opcode, ins.attrs, tuple(operand(v) for v in ins.outputs), tuple(operand(x) for x in ins.inputs))
        out[n] = ids.setdefault(key, len(ids))
    return out


def _repeats(keys: np.ndarray, max_period: int) -> np.ndarray:
    """``R[L - 1, j]``: how many instructions from ``j`` on equal the one ``L`` later."""
    n = len(keys)
    periods = min(max_period, n // 2)
    out = np.zeros((max(periods, 0), n), dtype=np.int64)
    for L in range(1, periods + 1):
        eq = np.zeros(n, dtype=bool)
        eq[: n - L] = keys[: n - L] == keys[L:]
        # distance to the next mismatch, by a reversed running minimum of mismatch positions
        pos = np.where(eq, n, np.arange(n))
        nxt = np.minimum.accumulate(pos[::-1])[::-1]
        out[L - 1] = nxt - np.arange(n)
    return out


def _candidates(rep: np.ndarray, s: int) -> list[tuple[int, int]]:
    """(period, count) of the runs starting at ``s``: most instructions covered first,
    shorter periods first among equals."""
    periods = np.arange(1, rep.shape[0] + 1)
    counts = rep[:, s] // periods + 1
    cover = np.where(counts >= 2, counts * periods, 0)
    order = np.lexsort((periods, -cover))
    order = order[cover[order] > 0]   # in numpy: this runs at every position of the batch
    return list(zip(periods[order].tolist(), counts[order].tolist()))


def _one_pass(program: Program, level: int, taken: set[str], prefix: str,
              budget: Budget = UNLIMITED) -> tuple[Program, list[Rerolled], list[Refused], dict[str, np.ndarray]]:
    """One pass from the first instruction to the last: at each position the best run
    (most instructions covered) that is legal is rerolled and skipped. The names of the
    literals' arrays it makes are added to ``taken`` (shared by the passes). When
    ``budget`` runs out, the pass keeps what it rerolled and the rest as it was."""
    ins = program.instructions
    if budget.expired():
        return program, [], [Refused(0, len(ins), 1, RerollRefusal.TIME_BUDGET, _cut_detail(budget), level)], {}
    rep = _repeats(_keys(program), MAX_PERIOD)
    any_run = (rep >= np.arange(1, rep.shape[0] + 1)[:, None]).any(axis=0) if rep.shape[0] else np.zeros(len(ins), bool)
    uses = _uses(program)
    body: list[Instruction] = []
    new_bases: dict[str, Base] = {}
    dropped: set[str] = set()
    done: list[Rerolled] = []
    refused: list[Refused] = []
    constants: dict[str, np.ndarray] = {}
    taken |= {b.name for b in program.bases}
    attempts, s = 0, 0
    regular: dict[tuple[int, int], tuple[int, int, RerollRefusal | None]] = {}   # (period, phase): _regular_from
    blocked: dict[int, int] = {}   # period -> end of a run refused for a dependency: its tails are too
    while s < len(ins):
        if s % 1024 == 0 and budget.expired():   # positions with no candidate cost time too
            refused.append(Refused(s, len(ins) - s, 1, RerollRefusal.TIME_BUDGET, _cut_detail(budget), level))
            if not done:
                return program, done, refused, constants
            return _rebuilt(program, body + list(ins[s:]), new_bases, dropped), done, refused, constants
        got: _Group | Refused | None = None
        for L, m in _candidates(rep, s)[:MAX_ACCEPT_TRIES] if any_run[s] else []:
            if s < blocked.get(L, 0) or not any(i.opcode in OpFamily.ELEMENTWISE for i in ins[s: s + L]):
                continue   # a run of DELs: nothing to compute
            attempts += 1
            if attempts > MAX_ATTEMPTS:
                refused.append(Refused(s, L, m, RerollRefusal.BUDGET, level=level))
                return _rebuilt(program, body + list(ins[s:]), new_bases, dropped), done, refused, constants
            try:
                budget.check("reroll")
                got = _try_run(ins, s, L, m, uses, taken, prefix, budget, regular)
            except BudgetExceeded:
                refused.append(Refused(s, len(ins) - s, 1, RerollRefusal.TIME_BUDGET, _cut_detail(budget), level))
                if not done:
                    return program, done, refused, constants
                return _rebuilt(program, body + list(ins[s:]), new_bases, dropped), done, refused, constants
            if isinstance(got, _Group):
                break
            refused.append(Refused(s, L, got.count, got.reason, got.detail, level))
            if got.reason in _INTRINSIC:
                blocked[L] = s + got.count * L
        if isinstance(got, _Group):
            done.append(Rerolled(s, got.length, got.count, len(body), level))
            body.extend(got.instructions)
            new_bases.update(got.bases)
            constants.update(got.constants)
            dropped |= got.dropped
            s += got.count * got.length
        else:
            body.append(ins[s])
            s += 1
    return _rebuilt(program, body, new_bases, dropped), done, refused, constants


def _cut_detail(budget: Budget) -> str:
    seconds = budget.seconds
    return "" if seconds is None or not np.isfinite(seconds) else f"its budget: {seconds:g} s"


def _uses(program: Program) -> dict[str, tuple[int, int]]:
    """Each base's first and last instruction (0-based)."""
    out: dict[str, tuple[int, int]] = {}
    for n, ins in enumerate(program):
        for v in ins.outputs + ins.views_in:
            lo, _ = out.get(v.base.name, (n, n))
            out[v.base.name] = (lo, n)
    return out


def _rebuilt(program: Program, body: list[Instruction], new_bases: dict[str, Base], dropped: set[str]) -> Program:
    """The program over ``body``: the old temporaries' declarations replaced by the new
    bases (each at its first instance's place)."""
    bases: list[Base] = []
    for b in program.bases:
        if b.name in new_bases:
            bases.append(new_bases[b.name])
        elif b.name not in dropped:
            bases.append(b)
    known = {b.name for b in program.bases}
    bases += [b for name, b in new_bases.items() if name not in known]   # the literals' arrays
    return Program(tuple(bases), tuple(body))


# --------------------------------------------------------------------------- one run

#: refusals every later start inside the run would meet again (not a matter of phase)
_INTRINSIC = frozenset({RerollRefusal.READS_OTHER_INSTANCE, RerollRefusal.WRITES_OVERLAP,
                        RerollRefusal.NOT_DATA_PARALLEL, RerollRefusal.TOO_LARGE_TO_CHECK,
                        RerollRefusal.NOT_ELEMENTWISE, RerollRefusal.LITERALS_DIFFER})


@dataclass(frozen=True)
class _Group:
    """A legal run's rewrite: its instructions, the new temporaries (by the name they
    take over) and the names of the temporaries they replace."""

    instructions: tuple[Instruction, ...]
    length: int
    count: int
    bases: dict[str, Base]
    dropped: frozenset[str]
    #: arrays of the literals that differ between iterations, by base name (inputs)
    constants: dict[str, np.ndarray]


@dataclass(frozen=True)
class _Slot:
    """One view operand of the group (instruction ``i``, operand ``p``: outputs first) over
    the run's instances: one base for all (``stride``: its offsets' step) or one
    temporary per instance (``new``: the base with one more axis that replaces them)."""

    i: int
    p: int
    view: View            # instance 0's view
    stride: int = 0
    new: Base | None = None

    @property
    def written(self) -> bool:
        return self.p == 0

    def combined(self, m: int) -> View:
        """The view over all ``m`` instances, the instance first."""
        v = self.view
        if self.new is not None:
            return View(self.new, (m,) + v.shape, (v.base.size,) + v.strides, v.offset)
        return View(v.base, (m,) + v.shape, (self.stride,) + v.strides, v.offset)

    def operand(self, m: int, rank: int) -> View:
        """The view the rerolled instruction reads or writes: a view every instance reads
        alike stays as it is (broadcast); others get the instance axis, then extent-1 axes
        up to the domain's rank (NumPy's broadcasting of a lower-rank input)."""
        if self.new is None and self.stride == 0 and not self.written:
            return self.view
        c, pad = self.combined(m), rank - self.view.ndim
        return View(c.base, (m,) + (1,) * pad + self.view.shape, (c.strides[0],) + (0,) * pad + self.view.strides,
                    c.offset)


def _operands(ins: Instruction) -> tuple[Any, ...]:
    return ins.outputs + ins.inputs


def _try_run(ins: Sequence[Instruction], s: int, L: int, m: int, uses: dict[str, tuple[int, int]],
             taken: set[str], prefix: str, budget: Budget = UNLIMITED,
             regular: dict[tuple[int, int], tuple[int, int, RerollRefusal | None]] | None = None) -> _Group | Refused:
    """The rewrite of ``m`` repetitions of ``ins[s:s+L]`` (perhaps fewer: the longest
    regular prefix), or why not (:class:`BudgetExceeded` when ``budget`` runs out in the
    scans that grow with ``m``)."""
    group = ins[s: s + L]
    bad = next((x for x in group if x.opcode not in OpFamily.ELEMENTWISE and x.opcode is not Opcode.DEL), None)
    if bad is not None:
        return Refused(s, L, m, RerollRefusal.NOT_ELEMENTWISE, bad.opcode.name)
    m, why = _regular_from(ins, s, L, m, budget, {} if regular is None else regular)
    if m < 2:
        return Refused(s, L, 2, why or RerollRefusal.IRREGULAR_OFFSETS)
    # In a regular run every two neighbouring iterations are a translate of the first two,
    # so their conflict is the run's: found on two iterations, before the work that grows
    # with m (`x += 1` 50,000 times: 5 s of literal and escape scans to refuse it).
    conflict = _conflict(_slots(ins, s, L, 2), 2)
    if conflict is not None:
        return Refused(s, L, m, conflict[0], conflict[1])
    escaped = _escaping(ins, s, L, m, uses)
    if escaped:
        return Refused(s, L, m, RerollRefusal.TEMPORARY_ESCAPES, escaped)
    budget.check("reroll")
    slots = _slots(ins, s, L, m)
    lits = _literal_slots(ins, s, L, m, taken, prefix)
    if isinstance(lits, Refused):
        return lits
    constants = {sl.view.base.name: values for sl, values in lits}
    slots += [sl for sl, _ in lits]
    conflict = _conflict(slots, m)
    if conflict is not None:
        return Refused(s, L, m, conflict[0], conflict[1])
    try:
        out = tuple(_emit(x, [sl for sl in slots if sl.i == i], m) for i, x in enumerate(group))
        for x in out:
            check_instruction(x)
    except ProgramError as exc:
        return Refused(s, L, m, RerollRefusal.NOT_DATA_PARALLEL, str(exc))
    new = {sl.new.name: sl.new for sl in slots if sl.new is not None}
    new.update({sl.view.base.name: sl.view.base for sl, _ in lits})
    dropped = frozenset(_operands(ins[s + k * L + sl.i])[sl.p].base.name
                        for sl in slots if sl.new is not None for k in range(m))
    return _Group(out, L, m, new, dropped - set(new), constants)


def _literal_slots(ins: Sequence[Instruction], s: int, L: int, m: int,
                   taken: set[str], prefix: str) -> list[tuple[_Slot, np.ndarray]] | Refused:
    """The literal operands that differ between iterations, each as a 0-d view of a new
    array of the values (an input), or why one cannot be. The array takes the literal's
    own dtype, which must be the dtype of every array of the instruction: then NumPy's
    rules for a Python scalar (NEP 50: weak) and for an array give one result."""
    out: list[tuple[_Slot, np.ndarray]] = []
    for i in range(L):
        x = ins[s + i]
        for p, lit in enumerate(_operands(x)):
            if not isinstance(lit, Literal):
                continue
            values = [_operands(ins[s + k * L + i])[p] for k in range(m)]
            if all(v == lit for v in values):
                continue
            arr = np.asarray([v.value for v in values])
            same = next((sl for sl, a in out if a.dtype == arr.dtype and a.tobytes() == arr.tobytes()), None)
            if same is not None:   # the same values again (l[i, k] written, then read): one array
                out.append((_Slot(i, p, same.view, 1), arr))
                continue
            dtypes = {v.dtype for v in _operands(x) if isinstance(v, View)}
            if x.opcode is Opcode.POWER or dtypes != {arr.dtype.name}:
                # a POWER's literal exponent is computed by its own formula (power)
                return Refused(s, L, m, RerollRefusal.LITERALS_DIFFER, f"instruction {s + i + 1}, {x.opcode.name}")
            name = next(f"{prefix}{j}" for j in range(len(taken) + 1) if f"{prefix}{j}" not in taken)
            taken.add(name)
            out.append((_Slot(i, p, View(Base(name, arr.dtype.name, (m,)), (), (), 0), 1), arr))
    return out


def _regular_from(ins: Sequence[Instruction], s: int, L: int, m: int, budget: Budget,
                  known: dict[tuple[int, int], tuple[int, int, RerollRefusal | None]]) -> tuple[int, RerollRefusal | None]:
    """:func:`_regular_count`, from what an earlier start of the same period and phase
    found (``known[L, s % L]``: its start, where its regular instances end, why they end): a run
    regular from ``s0`` is regular from each later instance ``s0 + j*L`` up to the same end
    (its views' offsets advance by the same strides). A refused run is tried again at each
    later start: 5,319 rescans of a 9,000-iteration loop took 30 s. An end for mixed bases
    is not reused (a fresh base's name may repeat one from before the new start)."""
    got = known.get((L, s % L))
    if got is not None:
        s0, end, why = got
        if s0 <= s < end and (s - s0) % L == 0:
            left = (end - s) // L
            if why is not None and m >= left:
                return left, why
            if m <= left:
                return m, None
    count, why = _regular_count(ins, s, L, m, budget)
    if why is not RerollRefusal.MIXED_BASES:
        known[L, s % L] = (s, s + count * L, why)
    return count, why


def _regular_count(ins: Sequence[Instruction], s: int, L: int, m: int,
                   budget: Budget = UNLIMITED) -> tuple[int, RerollRefusal | None]:
    """How many instances from the first are alike: each view operand of one base in all
    (offsets advancing by one stride) or of a fresh base in each (at one offset).
    ``budget`` is checked every few thousand instances."""
    limit, why = m, None
    for i in range(L):
        for p, v0 in enumerate(_operands(ins[s + i])):
            if not isinstance(v0, View):
                continue
            v1 = _operands(ins[s + L + i])[p]
            shared = v1.base.name == v0.base.name
            seen = {v0.base.name}
            for k in range(1, limit):
                if k % 4096 == 0:
                    budget.check("reroll")
                vk = _operands(ins[s + k * L + i])[p]
                if shared and vk.base.name != v0.base.name or not shared and vk.base.name in seen:
                    limit, why = k, RerollRefusal.MIXED_BASES
                    break
                want = v0.offset + k * (v1.offset - v0.offset) if shared else v0.offset
                if vk.offset != want:
                    limit, why = k, RerollRefusal.IRREGULAR_OFFSETS
                    break
                seen.add(vk.base.name)
    return limit, why


def _shared(ins: Sequence[Instruction], s: int, L: int, i: int, p: int) -> bool:
    """Whether operand ``p`` of the group's instruction ``i`` is one base in every
    instance (else a temporary per instance: :func:`_regular_count` checked the rest)."""
    return _operands(ins[s + i])[p].base.name == _operands(ins[s + L + i])[p].base.name


def _escaping(ins: Sequence[Instruction], s: int, L: int, m: int, uses: dict[str, tuple[int, int]]) -> str:
    """A per-instance temporary used outside its instance, or not freed in it, or not
    matched one to one by the other instances' temporaries ('' when none)."""
    fresh = [(i, p) for i in range(L) for p, v in enumerate(_operands(ins[s + i]))
             if isinstance(v, View) and not _shared(ins, s, L, i, p)]
    if any(ins[s + i].opcode is Opcode.DEL and (i, 0) not in fresh for i in range(L)):
        return "an array the iterations share is freed in the run"
    pattern = None
    for k in range(m):
        lo, hi = s + k * L, s + (k + 1) * L - 1
        order: dict[str, int] = {}
        slots = [order.setdefault(_operands(ins[lo + i])[p].base.name, len(order)) for i, p in fresh]
        freed = {ins[lo + i].outputs[0].base.name for i in range(L) if ins[lo + i].opcode is Opcode.DEL}
        for name in order:
            first, last = uses[name]
            if first < lo or last > hi or name not in freed:
                return f"{name} of iteration {k + 1}"
        if pattern is None:
            pattern = slots
        elif slots != pattern:
            return f"the temporaries of iteration {k + 1} are used differently"
    return ""


def _slots(ins: Sequence[Instruction], s: int, L: int, m: int) -> list[_Slot]:
    """The group's view operands, classified (:class:`_Slot`)."""
    out: list[_Slot] = []
    new: dict[str, Base] = {}
    for i in range(L):
        for p, v in enumerate(_operands(ins[s + i])):
            if not isinstance(v, View):
                continue
            if _shared(ins, s, L, i, p):
                out.append(_Slot(i, p, v, _operands(ins[s + L + i])[p].offset - v.offset))
            else:
                b = v.base
                nb = new.setdefault(b.name, Base(b.name, b.dtype, (m,) + b.shape))
                out.append(_Slot(i, p, v, 0, nb))
    return out


def _conflict(slots: list[_Slot], m: int) -> tuple[RerollRefusal, str] | None:
    """The first pair of operands through which one instance writes what another reads or
    writes, or ``None``. Temporaries are each instance's own: only shared bases count."""
    shared = [sl for sl in slots if sl.new is None]
    combined = {id(sl): sl.combined(m) for sl in shared}
    for w in shared:
        if not w.written:
            continue
        cw = combined[id(w)]
        for a in shared:
            ca = combined[id(a)]
            if ca.base != cw.base:
                continue
            met = _across(cw, ca, m, same=a is w)
            if met is None:
                return RerollRefusal.TOO_LARGE_TO_CHECK, f"{_name(cw)} and {_name(ca)}"
            if met:
                reason = RerollRefusal.WRITES_OVERLAP if a.written else RerollRefusal.READS_OTHER_INSTANCE
                return reason, f"{_name(cw)} written, {_name(ca)} {'written' if a.written else 'read'}"
    return None


def _name(v: View) -> str:
    from fusionlab.ir.text import format_view

    return format_view(v)


def _across(w: View, a: View, m: int, same: bool) -> bool | None:
    """Whether an element of ``w`` (instance axis first) is met by ``a`` in another
    instance: exact. ``None`` when the views meet and are too large to enumerate."""
    if same or w == a:
        # one view over the instances: they meet only if it addresses an element twice;
        # a basic-slicing view never does
        if w.as_index() is not None:
            return False
    elif not w.overlaps(a):
        return False
    if w.size + a.size > MAX_CHECKED_ELEMENTS:
        return None
    iw, ia = w.indices().reshape(m, -1), a.indices().reshape(m, -1)
    common = np.intersect1d(iw, ia)
    lo_w, hi_w = _instances(iw, common)
    lo_a, hi_a = _instances(ia, common)
    return bool(np.any(lo_w != hi_w) or np.any(lo_a != hi_a) or np.any(lo_w != lo_a))


def _instances(idx: np.ndarray, elements: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The first and last instance (row of ``idx``) touching each of ``elements``."""
    e = idx.ravel()
    k = np.repeat(np.arange(idx.shape[0]), idx.shape[1])
    order = np.lexsort((k, e))
    e, k = e[order], k[order]
    first = np.searchsorted(e, elements, side="left")
    last = np.searchsorted(e, elements, side="right") - 1
    return k[first], k[last]


def _emit(x: Instruction, slots: list[_Slot], m: int) -> Instruction:
    """The rerolled form of the group's instruction ``x``."""
    by_p = {sl.p: sl for sl in slots}
    if x.opcode is Opcode.DEL:
        return Instruction(Opcode.DEL, (by_p[0].new.view(),))   # type: ignore[union-attr]
    rank = x.outputs[0].ndim
    ops = [by_p[p].operand(m, rank) if p in by_p else v for p, v in enumerate(_operands(x))]
    return Instruction(x.opcode, tuple(ops[: len(x.outputs)]), tuple(ops[len(x.outputs):]), x.attrs)
