"""Every term reachable from a start term by the rules, each with its derivation.

:func:`explore` runs a breadth-first search: from each term it tries every rule at every
position (subdivision with each block size offered for the letter at that level), keeps
each new term with the :class:`Step` that first reached it and its parent, and stops when
nothing new appears or the :class:`~fusionlab.support.budget.Budget` runs out (then the result says
it is not complete). :func:`replay` applies a derivation rule by rule.

Examples
--------
>>> from fusionlab.explore.hof.contraction import contraction_term
>>> t = contraction_term("ij,jk->ik", (4, 32), (32, 5))
>>> r = explore(t)
>>> len(r.terms), r.complete
(6, True)
>>> r2 = explore(t, blocks={"j": 16})
>>> len(r2.terms), len({u.order() for u in r2.terms if u.blocks})
(30, 12)
>>> last = r2.terms[-1]
>>> replay(t, r2.derivation(last)) == last
True
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from fusionlab.support.budget import UNLIMITED, Budget, BudgetExceeded
from fusionlab.explore.hof.rules import RULES, Refusal
from fusionlab.explore.hof.term import Term

__all__ = ["Step", "Exploration", "explore", "replay", "moves"]


@dataclass(frozen=True)
class Step:
    """One rewrite: the rule's name, the nest position it acted at, and its parameter."""

    rule: str
    position: int
    param: int | None = None

    def __str__(self) -> str:
        p = "" if self.param is None else f" by {self.param}"
        return f"{self.rule} (eq. {RULES[self.rule].equation}) at level {self.position}{p}"


@dataclass
class Exploration:
    """The reachable terms in discovery order (``terms[0]`` is the start) and how each was reached."""

    start: Term
    terms: list[Term] = field(default_factory=list)
    parent: dict[Term, tuple[Term, Step] | None] = field(default_factory=dict)
    complete: bool = True

    def derivation(self, term: Term) -> tuple[Step, ...]:
        """The steps from the start term to ``term``, in order."""
        steps: list[Step] = []
        cur = term
        while (link := self.parent[cur]) is not None:
            cur, step = link
            steps.append(step)
        return tuple(reversed(steps))


def _moves(term: Term, blocks: Mapping[str, int]) -> list[Step]:
    moves: list[Step] = []
    for name, rule in RULES.items():
        for pos in range(len(term.levels)):
            if rule.takes_param:
                b = blocks.get(term.levels[pos].index)
                if b is not None:
                    moves.append(Step(name, pos, b))
            else:
                moves.append(Step(name, pos))
    return moves


def moves(term: Term, blocks: Mapping[str, int] | None = None) -> list[tuple[Step, Term | Refusal]]:
    """Every rule at every position of ``term``, with its result or its refusal (an explorer's menu).

    Examples
    --------
    >>> from fusionlab.explore.hof.contraction import contraction_term
    >>> t = contraction_term("ij,jk->ik", (4, 32), (32, 5))
    >>> for step, new in moves(t, {"j": 16}):
    ...     if not isinstance(new, Refusal):
    ...         print(step, "->", " ".join(lv.name() for lv in new.levels))
    map-map flip (eq. 36-37) at level 0 -> k i j
    map-rnz exchange (eq. 42) at level 1 -> i j k
    subdivision (eq. 44) at level 2 by 16 -> i k j_o j_i
    """
    return [(s, RULES[s.rule].apply(term, s.position, s.param)) for s in _moves(term, dict(blocks or {}))]


def explore(start: Term, blocks: Mapping[str, int] | None = None,
            budget: Budget = UNLIMITED, max_terms: int = 100_000) -> Exploration:
    """Enumerate every term reachable from ``start``.

    Parameters
    ----------
    start
        The term to begin from.
    blocks
        Block size per letter that subdivision may use (none: no subdivision).
    budget
        Checked once per expanded term; when it runs out the result is marked incomplete.
    max_terms
        A second bound on the search (terms kept), for the same reason.
    """
    blocks = dict(blocks or {})
    result = Exploration(start, [start], {start: None})
    queue = deque([start])
    try:
        while queue:
            budget.check("hof explore")
            term = queue.popleft()
            for step in _moves(term, blocks):
                new = RULES[step.rule].apply(term, step.position, step.param)
                if isinstance(new, Refusal) or new in result.parent:
                    continue
                if len(result.terms) >= max_terms:
                    result.complete = False
                    return result
                result.parent[new] = (term, step)
                result.terms.append(new)
                queue.append(new)
    except BudgetExceeded:
        result.complete = False
    return result


def replay(start: Term, steps: Sequence[Step]) -> Term:
    """Apply ``steps`` in order; raises ``ValueError`` naming the first step a rule refuses."""
    term = start
    for n, step in enumerate(steps):
        new = RULES[step.rule].apply(term, step.position, step.param)
        if isinstance(new, Refusal):
            raise ValueError(f"step {n} refused: {new}")
        term = new
    return term
