"""What the preparing passes report: one typed record per rewrite, not a line of prose.

The dead-writes pass (:mod:`fusionlab.passes.deadwrites`), rerolling
(:mod:`fusionlab.passes.reroll`) and the early frees (:mod:`fusionlab.passes.deadbases`) each
say what they changed as :class:`Rewrite` records, and the preparing stage
(:mod:`fusionlab.pipeline.preparing`) adds the records of where its budget cut a pass. A
front end that shows them calls :meth:`Rewrite.describe`; one that decides anything (which
records are cuts, how many runs were rerolled) reads :attr:`Rewrite.kind`, never the text
(issue 33, "decisions are types, not text").

Examples
--------
>>> r = Rewrite(RewriteKind.FREED_EARLY, 0, 1, "s freed after instruction 2 (its next use is its DEL in batch 2): "
...             "not stored unless read", RewritePass.FREE_EARLY)
>>> r.describe()
'batch 1: s freed after instruction 2 (its next use is its DEL in batch 2): not stored unless read'
>>> r.describe(numbered=False)[:28], r.kind.name, r.instruction
('s freed after instruction 2 ', 'FREED_EARLY', 1)

Rerolling names the batch only when the run has several:

>>> Rewrite(RewriteKind.REROLLED, 0, None, "rerolled: 22 instructions -> 7", RewritePass.REROLL).describe()
'rerolled: 22 instructions -> 7'
>>> Rewrite(RewriteKind.REROLLED, 1, None, "rerolled: 22 instructions -> 7", RewritePass.REROLL, 2).describe()
'batch 2: rerolled: 22 instructions -> 7'
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

__all__ = ["RewriteKind", "RewritePass", "Rewrite", "WRITE_KINDS"]


class RewritePass(enum.Enum):
    """The pass a record comes from (the values are the pipeline's ``Pass`` names; the
    pipeline's enum lives in a later stage, so the passes cannot name it)."""

    DEAD_WRITES = "dead writes"
    REROLL = "reroll"
    FREE_EARLY = "free early"


class RewriteKind(enum.Enum):
    """What a record says, as the passes distinguish it."""

    #: dead writes: every element an instruction wrote is overwritten before a read; it is removed
    WRITE_REMOVED = "an instruction removed: all of its output is overwritten before anything reads it"
    #: dead writes: the instruction now writes only the parts still read (the slabs of the rest)
    WRITE_RESTRICTED = "an instruction restricted to the parts of its output read before being overwritten"
    #: rerolling: a batch's length before and after (the first of its records)
    REROLLED = "a batch rerolled: its length before and after"
    #: rerolling: one run of an unrolled loop rewritten into one group
    RUN_REROLLED = "a run of repeated instruction groups rerolled into one group"
    #: rerolling: the runs rerolled past the ones listed, counted
    MORE_RUNS_REROLLED = "more runs rerolled than are listed"
    #: rerolling: the runs left unrolled for one reason, counted (the first as example)
    RUNS_NOT_REROLLED = "runs left unrolled for one reason"
    #: free early: a DEL moved back from a later batch to after its base's last use
    FREED_EARLY = "an array freed after its last use, its DEL moved from a later batch"
    #: the time budget stopped a pass: from this batch (and instruction) on, it stays as captured
    BUDGET_CUT = "the time budget stopped the pass: the rest stays as captured"


#: the kinds that are rewrites of an instruction (the dead-writes pass's)
WRITE_KINDS = frozenset({RewriteKind.WRITE_REMOVED, RewriteKind.WRITE_RESTRICTED})


@dataclass(frozen=True)
class Rewrite:
    """One thing a preparing pass did, or where the budget stopped it.

    Parameters
    ----------
    kind : RewriteKind
        What happened (decide by this, never by :attr:`detail`).
    batch : int or None
        The batch, numbered from 0 in the run's batches (``None``: not about one batch).
    instruction : int or None
        The instruction, numbered from 0 in the program the pass read: the one rewritten
        (dead writes), the first of a run (rerolling, as captured), the one after which an
        array is freed (free early), where the budget stopped rerolling; ``None`` when the
        record is about a whole batch.
    detail : str
        The pass's line, for people: what :meth:`describe` shows after the batch.
    by : RewritePass
        The pass that reported it.
    batches : int
        The batches of the run the pass saw (rerolling names the batch only when several).
    base : str or None
        The array concerned: the one an instruction rewritten by the dead-writes pass
        writes, the one freed early (``None`` for rerolling and the cuts).

    Examples
    --------
    >>> r = Rewrite(RewriteKind.WRITE_REMOVED, 0, 15, "instruction 16 (COPY new, u) removed: all of it is "
    ...             "overwritten by instruction 28 before anything reads it", RewritePass.DEAD_WRITES)
    >>> str(r)[:40], r.kind is RewriteKind.WRITE_REMOVED, r.instruction + 1
    ('batch 1: instruction 16 (COPY new, u) re', True, 16)
    >>> r == Rewrite(RewriteKind.WRITE_REMOVED, 0, 15, "another text", RewritePass.DEAD_WRITES)
    False
    """

    kind: RewriteKind
    batch: int | None
    instruction: int | None
    detail: str
    by: RewritePass
    batches: int = 1
    base: str | None = None

    @property
    def numbered(self) -> bool:
        """Whether :meth:`describe` names the batch: always for a batch's dead writes and
        early frees, for rerolling only in a run of several batches (one batch's listing is
        the explorer's, where the batch is shown); a cut of the dead-writes pass names its
        batch in its own line ("in batch 1 of 2")."""
        if self.batch is None:
            return False
        if self.by is RewritePass.REROLL:
            return self.batches > 1
        return not (self.by is RewritePass.DEAD_WRITES and self.kind is RewriteKind.BUDGET_CUT)

    def describe(self, numbered: bool = True) -> str:
        """The line shown: :attr:`detail`, after ``batch K: `` (from 1) when :attr:`numbered`
        and ``numbered`` is true (``False``: the line of one batch shown alone)."""
        if numbered and self.numbered:
            return f"batch {self.batch + 1}: {self.detail}"   # type: ignore[operator]  # numbered: batch is set
        return self.detail

    def __str__(self) -> str:
        return self.describe()
