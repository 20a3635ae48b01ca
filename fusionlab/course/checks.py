"""Checks for the course's exercises.

An exercise in a lab is three cells, tagged ``exercise:<id>`` (docs/notebooks.md):

- the **answer** cell (tag ``answer``): the student's values, ``None`` until answered; its
  metadata ``fusionlab.wrong`` holds a plausible wrong answer (the tests run it);
- the **check** cell (tag ``check``): calls :func:`check_number`, :func:`check_choice` or
  :func:`check`, which print ``correct`` or ``not yet: <hint>`` and return a :class:`Verdict`;
- the **solution** cell (tag ``solution``), its source collapsed: the answer, assigned to the
  same names (it runs after the check, so a "Run all" still asks the question first).

``tests/test_course.py`` runs every exercise of every lab with its wrong answer (the check
must say "not yet") and with its solution (it must say "correct").

Examples
--------
>>> check_number("the singleton cost", 72_000_000, 72e6, "count every read and write").ok
correct
True
>>> print(check_number("the cost", None, 72e6, "count"))
not yet: the cost is not answered yet (fill it in above, then run this cell again)
not yet: the cost is not answered yet (fill it in above, then run this cell again)
>>> check_choice("the bound", "Memory", {"memory", "bandwidth"}, "which resource runs out?").ok
correct
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Collection

__all__ = ["Verdict", "unanswered", "check", "check_number", "check_choice"]


@dataclass(frozen=True)
class Verdict:
    """A check's outcome: ``ok``, and what it says (``correct``, or ``not yet: <hint>``)."""

    ok: bool
    message: str

    def __str__(self) -> str:
        return self.message

    def __bool__(self) -> bool:
        return self.ok


def unanswered(value: Any) -> bool:
    """Whether ``value`` is still the answer cell's placeholder (``None`` or ``...``)."""
    return value is None or value is Ellipsis


def _say(ok: bool, hint: str, quiet: bool) -> Verdict:
    verdict = Verdict(ok, "correct" if ok else f"not yet: {hint}")
    if not quiet:
        print(verdict.message)
    return verdict


def check(name: str, answer: Any, right: Callable[[Any], bool], hint: str, quiet: bool = False) -> Verdict:
    """``right(answer)`` decides; ``hint`` says where to look when it does not hold."""
    if unanswered(answer):
        return _say(False, f"{name} is not answered yet (fill it in above, then run this cell again)", quiet)
    try:
        ok = bool(right(answer))
    except Exception as exc:   # a malformed answer is "not yet", with what was wrong with it
        return _say(False, f"{name} could not be read ({type(exc).__name__}: {exc}); {hint}", quiet)
    return _say(ok, hint, quiet)


def check_number(name: str, answer: Any, expected: float, hint: str, rel: float = 1e-9,
                 quiet: bool = False) -> Verdict:
    """A number within ``rel`` (relative) of ``expected``: an estimate gets a looser ``rel``."""
    def right(x: Any) -> bool:
        x = float(x)
        return math.isfinite(x) and math.isclose(x, float(expected), rel_tol=rel, abs_tol=1e-12)
    return check(name, answer, right, hint, quiet)


def check_choice(name: str, answer: Any, accepted: Collection[str], hint: str, quiet: bool = False) -> Verdict:
    """A word among ``accepted`` (case and surrounding spaces ignored)."""
    wanted = {a.strip().lower() for a in accepted}
    return check(name, answer, lambda x: str(x).strip().lower() in wanted, hint, quiet)
