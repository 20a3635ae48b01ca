"""Arrays freed early: a base whose next use, in a later batch, is its DEL is freed at the
end of its last use in the earlier batch.

Capture learns that an array died only when Python drops it: a loop that rebinds
``scaled = ...`` each iteration, with a ``float(...)`` ending every iteration's batch,
frees the old ``scaled`` in the *next* batch, after that batch's first instructions. In
its own batch the array is therefore alive at the end, and every kernel writing it stores
it: a pass over memory per iteration for a value nothing reads (histogram equalisation:
``scaled`` and ``z``, 16 of its 72 MB a pass at medium). Across the batches of one run
(``run``, Compile & time, the benchmarks) the future is known: :func:`free_early` moves
such a DEL back, to just after the base's last use in the earlier batch, where the cost
models and the code generator see a temporary (no store when its writer and the DEL share a
kernel).

The rule (docs/passes.md, "Arrays freed early"). A base of batch ``k`` gets an early DEL
when

- it is touched in batch ``k`` (read or written) and not DELed there;
- no SYNC of it is in batch ``k`` (the user's code read it there);
- it is not one of the run's inputs (``keep``: the user's arrays, whose memory other
  references may see, and the constants rerolling made);
- the first instruction touching it in any later batch is its DEL (batches between may not
  touch it at all).

A value leaves the captured world only through a SYNC (capture SYNCs what the user keeps at
the end, and whatever Python reads on the way), so such a base is never read again. The
later batch's DEL is removed, and with it the base's declaration there when nothing else
names it.

Examples
--------
>>> from fusionlab import parse
>>> b1 = parse('''
... ARRAY x float64[8]
... ARRAY s float64[8]
... ARRAY t float64[]
... MULTIPLY s, x, 2
... ADD_REDUCE t, s, axis=None
... SYNC t
... ''')
>>> b2 = parse('''
... ARRAY t float64[]
... ARRAY s float64[8]
... DEL t
... DEL s
... ''')
>>> got = free_early([b1, b2], keep=frozenset({"x"}))
>>> print(got.batches[0].to_text().split("\\n", 3)[3])
MULTIPLY s, x, 2
ADD_REDUCE t, s, axis=None
DEL s
SYNC t
>>> print(got.batches[1].to_text())
ARRAY t float64[]
DEL t
>>> got.moved
(EarlyFree(base='s', batch=0, after=1, from_batch=1),)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import AbstractSet, Sequence

from fusionlab.ir.bytecode import Instruction, Opcode, Program
from fusionlab.passes.rewrites import Rewrite, RewriteKind, RewritePass

__all__ = ["EarlyFree", "EarlyFrees", "free_early", "rewrites_early"]


@dataclass(frozen=True)
class EarlyFree:
    """One DEL moved back: ``base``'s DEL now follows instruction ``after`` of batch
    ``batch`` (numbered as in the batch before the move, from 0); it was in ``from_batch``."""

    base: str
    batch: int
    after: int
    from_batch: int


@dataclass(frozen=True)
class EarlyFrees:
    """The batches with the DELs moved, and which moved."""

    batches: tuple[Program, ...]
    moved: tuple[EarlyFree, ...]


def _touches(ins: Instruction) -> set[str]:
    """The bases an instruction names (reads, writes, DEL, SYNC)."""
    return {v.base.name for v in ins.outputs + ins.views_in}


def _uses(batch: Program) -> tuple[dict[str, int], dict[str, int], set[str], set[str]]:
    """Per base of ``batch``: the first and last instruction naming it, the bases DELed and
    the bases SYNCed."""
    first: dict[str, int] = {}
    last: dict[str, int] = {}
    deleted: set[str] = set()
    synced: set[str] = set()
    for i, ins in enumerate(batch.instructions):
        for name in _touches(ins):
            first.setdefault(name, i)
            last[name] = i
        if ins.opcode is Opcode.DEL:
            deleted.add(ins.outputs[0].base.name)
        elif ins.opcode is Opcode.SYNC:
            synced.update(v.base.name for v in ins.views_in)
    return first, last, deleted, synced


def free_early(batches: Sequence[Program], keep: AbstractSet[str] = frozenset()) -> EarlyFrees:
    """Move each DEL that is a base's first use in a later batch back to its last use in
    the batch before (the rule in the module's docstring). Linear in the batches' length.

    Parameters
    ----------
    batches : sequence of Program
        One run's batches, in order (bases are shared between batches by name).
    keep : set of str
        Bases never freed early: the run's inputs.

    Returns
    -------
    EarlyFrees
        The rewritten batches (the same objects where nothing moved) and the moves.
    """
    uses = [_uses(b) for b in batches]
    # a base touched and left alive by an earlier batch: that batch's index, or -1 when it
    # may not be freed early there (a SYNC read it, or it is an input)
    pending: dict[str, int] = {}
    moved: list[EarlyFree] = []
    for j, batch in enumerate(batches):
        first, last, deleted, synced = uses[j]
        for name, i in first.items():
            k = pending.pop(name, -1)
            if k >= 0 and batch.instructions[i].opcode is Opcode.DEL:
                moved.append(EarlyFree(name, k, uses[k][1][name], j))
        for name in first:
            if name not in deleted:
                pending[name] = -1 if name in synced or name in keep else j
    if not moved:
        return EarlyFrees(tuple(batches), ())
    return EarlyFrees(tuple(_rewrite(batches, moved)), tuple(moved))


def _rewrite(batches: Sequence[Program], moved: Sequence[EarlyFree]) -> list[Program]:
    """The batches with each moved DEL inserted after its base's last use and removed where
    it was."""
    into: dict[int, dict[int, list[str]]] = {}
    out_of: dict[int, set[str]] = {}
    for m in moved:
        into.setdefault(m.batch, {}).setdefault(m.after, []).append(m.base)
        out_of.setdefault(m.from_batch, set()).add(m.base)
    result = []
    for j, batch in enumerate(batches):
        if j not in into and j not in out_of:
            result.append(batch)
            continue
        after = into.get(j, {})
        gone = out_of.get(j, set())
        views = {b.name: b.view() for b in batch.bases}
        body: list[Instruction] = []
        for i, ins in enumerate(batch.instructions):
            if not (ins.opcode is Opcode.DEL and ins.outputs[0].base.name in gone):
                body.append(ins)
            body.extend(Instruction(Opcode.DEL, (views[name],)) for name in after.get(i, ()))
        named = {name for ins in body for name in _touches(ins)}
        bases = tuple(b for b in batch.bases if b.name not in gone or b.name in named)
        result.append(Program(bases, tuple(body)))
    return result


def rewrites_early(moved: Sequence[EarlyFree], batches: int = 1) -> list[Rewrite]:
    """One :attr:`~RewriteKind.FREED_EARLY` record per moved DEL (``batches``: the run's
    batches), in the batch it moved into, after the base's last use there; its line numbers
    the batches and instructions from 1.

    >>> [r] = rewrites_early([EarlyFree("s", 0, 1, 1)], batches=2)
    >>> r.kind.name, r.batch, r.instruction, r.base
    ('FREED_EARLY', 0, 1, 's')
    >>> r.describe()
    'batch 1: s freed after instruction 2 (its next use is its DEL in batch 2): not stored unless read'
    """
    return [Rewrite(RewriteKind.FREED_EARLY, m.batch, m.after,
                    f"{m.base} freed after instruction {m.after + 1} (its next use is its DEL in batch "
                    f"{m.from_batch + 1}): not stored unless read", RewritePass.FREE_EARLY, batches, m.base)
            for m in moved]
