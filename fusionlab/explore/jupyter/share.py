"""The exact searches' share of a cell's budget (``%%fuse --exact-time``).

The exact searches of the comparison grid (``optimal``'s branch and bound, ``ilp``) take at
most ``seconds`` together, so that a small cell returns in a few seconds rather than when
its budget ends. Each search gets what is left of the share over the exact partitions still
pending, this one included (and never more than its own limit): every cost model gets its
turn and time one does not use goes to the next. The partition the user asked to see first
is outside the share (its own limit, within the budget). The searches the share cut are
remembered per batch for the report's notice. The figures behind the choice are in
docs/explorer.md.

Examples
--------
>>> from fusionlab.support.budget import Budget
>>> share = ExactShare(3.0)
>>> cell = Budget(15.0)
>>> pending = [("optimal", "bohrium"), ("ilp", "bohrium"), ("optimal", "robinson")]
>>> b = share.limit(cell, ("ilp", "bohrium"), 10.0, chosen=("greedy", "bohrium"), pending=pending)
>>> 0.9 < b.seconds <= 1.0             # a third of the 3 s share
True
>>> share.limit(cell, ("ilp", "bohrium"), 10.0, chosen=("ilp", "bohrium"), pending=pending).seconds > 9
True
>>> share.record(0, ("ilp", "bohrium"), timed_out=True, chosen=("greedy", "bohrium"))
>>> share.notice(0)["message"][:47]
'the exact searches were given 3 s together (--e'
>>> share.record(1, ("ilp", "bohrium"), timed_out=True, chosen=("greedy", "bohrium"),
...              given=Budget(2.0), own=2.0)    # its own limit, not the share's
>>> share.notice(1) is None
True
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from fusionlab.support.budget import Budget
from fusionlab.explore.report import EXACT_ALGORITHMS
from fusionlab.explore.notices import ReportNotice, report_notice

__all__ = ["ExactShare"]


@dataclass
class ExactShare:
    """The share's budget (made from the budget of one :meth:`FuseResult.compute` call, at
    its first shared search) and the searches it cut, per batch.

    Parameters
    ----------
    seconds
        Seconds of the share; ``None``: no share (only the caller's budget bounds them).
    """

    seconds: float | None
    budget: Budget | None = None
    _parent: Budget | None = None
    cut: dict[int, list[tuple[str, str]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.seconds is not None and not self.seconds >= 0:
            raise ValueError(f"exact_seconds must be a non-negative number of seconds or None, "
                             f"not {self.seconds!r}")

    def shared(self, key: tuple[str, str], chosen: tuple[str, str]) -> bool:
        """Whether partition ``key`` (algorithm, cost model) is bounded by the share."""
        return self.seconds is not None and key[0] in EXACT_ALGORITHMS and key != chosen

    def limit(self, budget: Budget, key: tuple[str, str], own: float | None, *, chosen: tuple[str, str],
              pending: Sequence[tuple[str, str]]) -> Budget:
        """The budget of partition ``key``: its own limit ``own`` cut to what is left of
        ``budget`` and, when shared, to a fair part of what is left of the share."""
        if not self.shared(key, chosen):
            return budget.child(own)
        if self.budget is None or self._parent is not budget:
            self._parent, self.budget = budget, budget.child(self.seconds)
        waiting = sum(1 for k in pending if self.shared(k, chosen))
        part = self.budget.remaining() / max(waiting, 1)
        return self.budget.child(part if own is None else min(own, part))

    def record(self, batch: int, key: tuple[str, str], *, timed_out: bool, chosen: tuple[str, str],
               given: Budget | None = None, own: float | None = None) -> None:
        """Remember a shared search the share's time cut. A node limit is the search's own
        reason, and so is its own time limit ``own`` when the share did not shorten it (the
        budget it was ``given`` had all of ``own``): the notice would tell the user to give
        the share more time, which would change nothing."""
        if given is not None and own is not None and given.seconds is not None and given.seconds >= own:
            return
        if timed_out and self.shared(key, chosen):
            self.cut.setdefault(batch, []).append(key)

    def notice(self, batch: int) -> dict[str, Any] | None:
        """The report's notice naming the searches the share cut in ``batch``, and how to
        search longer (``None`` when it cut none)."""
        cut = self.cut.get(batch)
        if not cut:
            return None
        which = ", ".join(f"{a} under {m}" for a, m in cut)
        more = max(10 * (self.seconds or 1.0), 30.0)
        return report_notice(ReportNotice.SEARCH_CUT, (
            f"the exact searches were given {self.seconds:g} s together (--exact-time) so that the cell returns "
            f"quickly; {len(cut)} stopped there ({which}) and show the best partition found so far, not proven "
            f"optimal. To search longer, rerun the cell with --exact-time {more:g} --budget {more + 5:g}."))
