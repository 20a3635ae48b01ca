"""The paper's rewrite rules on contraction terms, as named data.

Every rule is a :class:`Rule` (its name, the paper's equation, what it does) whose
:meth:`Rule.apply` takes a term, a position in its nest and an optional parameter and returns
the rewritten :class:`~fusionlab.explore.hof.term.Term` or a :class:`Refusal` with a
:class:`Reason`. The exchange rules act on the levels at ``position`` and ``position + 1``:

- ``map-map flip`` (eq. 36-37): two maps (or zips) swap; the operands walked by both flip.
- ``map-rnz exchange`` (eq. 42): a map and an rnz swap (either way round); the rnz that moves
  out reduces with ``lift r`` (``zip (+)``), the operand walked by both flips.
- ``rnz-rnz exchange`` (eq. 43): two rnz swap, only when both reduce with the same operator
  and it is associative and commutative.
- ``subdivision`` (eq. 44): the level at ``position`` splits into blocks of ``param`` and the
  elements of a block; the block size must divide the extent.

The fusion rules of eq. 19-34 (map-map fusion, nzip / ncomp, rnz absorption, products)
join pipelines of HoFs; a two-operand contraction's term is already their result (its
innermost ``rnz (+) (*)`` is eq. 29), so they act on the pipelines of
:mod:`fusionlab.explore.hof.pipeline` and share :class:`Reason` and :class:`Refusal` with these.

Examples
--------
>>> from fusionlab.explore.hof.contraction import contraction_term
>>> t = contraction_term("ij,jk->ik", (4, 6), (6, 5))
>>> print(t)
map (\\a0 -> map (\\b1 -> rnz (+) (*) a0 b1) (flip 0 B)) A
>>> print(RULES["map-rnz exchange"].apply(t, 1))
map (\\a0 -> rnz (zip (+)) (\\a1 b1 -> map (\\b2 -> a1 * b2) b1) a0 B) A
>>> RULES["map-map flip"].apply(t, 1).reason
<Reason.NOT_TWO_MAPS: 'the two levels are not both maps'>
>>> RULES["subdivision"].apply(t, 2, 4).reason
<Reason.BLOCK_NOT_DIVISOR: 'the block size does not divide the extent'>
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace
from typing import Callable

from fusionlab.explore.hof.term import Level, Term

__all__ = ["Reason", "Refusal", "Rule", "RULES", "apply_rule"]


class Reason(enum.Enum):
    """Why a rule does not apply where it was asked to."""

    NO_SUCH_POSITION = "the position is outside the nest"
    NOT_TWO_MAPS = "the two levels are not both maps"
    NOT_MAP_AND_RNZ = "the two levels are not one map and one rnz"
    NOT_TWO_RNZ = "the two levels are not both rnz"
    DIFFERENT_REDUCERS = "the two rnz reduce with different operators (eq. 43 needs the same r)"
    NOT_ASSOCIATIVE = "the reducer is not associative (eq. 43)"
    NOT_COMMUTATIVE = "the reducer is not commutative (eq. 43)"
    ALREADY_SUBDIVIDED = "the index is already subdivided (one level of subdivision here)"
    NO_BLOCK_SIZE = "subdivision needs a block size"
    BLOCK_NOT_DIVISOR = "the block size does not divide the extent"
    TRIVIAL_BLOCK = "a block of 1 or of the whole extent leaves the nest as it is"
    # the fusion rules of eq. 19-34, on pipelines (fusionlab.explore.hof.pipeline)
    NOT_MAP_OF_MAP = "the node is not a map of a map"
    NOT_NZIP = "the node is not a map / zip"
    NOT_RNZ = "the node is not an rnz"
    NO_SUCH_ARGUMENT = "the HoF has no argument at that index"
    NOT_NZIP_ARGUMENT = "that argument is not an nzip (map / zip) to fuse"
    NOT_A_LAMBDA = "ncomp composes lambdas; a product or fan-out function is not one"
    NOT_REDUCE_OF_NZIP = "the node is not a reduce of a map / zip"
    NOT_PAIR_OF_NZIPS = "the node is not a pair of two maps / zips"
    ARITY_MISMATCH = "the two maps / zips take different numbers of arguments"
    DIFFERENT_ARGUMENTS = "fan-out needs both maps over the same argument"
    NOT_PAIR_OF_REDUCES = "the node is not a pair of two reduces"


@dataclass(frozen=True)
class Refusal:
    """A rule that did not apply, and why."""

    rule: str
    position: int
    reason: Reason

    def __str__(self) -> str:
        return f"{self.rule} at {self.position}: {self.reason.value}"


@dataclass(frozen=True)
class Rule:
    """A named rewrite rule of paper 003."""

    name: str
    equation: str
    summary: str
    takes_param: bool
    check: Callable[[Term, int, int | None], Reason | None]
    rewrite: Callable[[Term, int, int | None], Term]

    def apply(self, term: Term, position: int, param: int | None = None) -> Term | Refusal:
        """The rewritten term, or a :class:`Refusal` saying why the rule does not apply."""
        reason = self.check(term, position, param)
        if reason is not None:
            return Refusal(self.name, position, reason)
        return self.rewrite(term, position, param)


def _pair(term: Term, position: int) -> tuple[Level, Level] | None:
    if not 0 <= position < len(term.levels) - 1:
        return None
    return term.levels[position], term.levels[position + 1]


def _swap(term: Term, position: int, _param: int | None) -> Term:
    lv = list(term.levels)
    lv[position], lv[position + 1] = lv[position + 1], lv[position]
    return replace(term, levels=tuple(lv))


def _check_map_map(term: Term, position: int, _param: int | None) -> Reason | None:
    pair = _pair(term, position)
    if pair is None:
        return Reason.NO_SUCH_POSITION
    return None if all(term.is_map(x) for x in pair) else Reason.NOT_TWO_MAPS


def _check_map_rnz(term: Term, position: int, _param: int | None) -> Reason | None:
    pair = _pair(term, position)
    if pair is None:
        return Reason.NO_SUCH_POSITION
    return None if term.is_map(pair[0]) != term.is_map(pair[1]) else Reason.NOT_MAP_AND_RNZ


def _check_rnz_rnz(term: Term, position: int, _param: int | None) -> Reason | None:
    pair = _pair(term, position)
    if pair is None:
        return Reason.NO_SUCH_POSITION
    if any(term.is_map(x) for x in pair):
        return Reason.NOT_TWO_RNZ
    r0, r1 = (term.reducer(x.index) for x in pair)
    if r0 != r1:
        return Reason.DIFFERENT_REDUCERS
    if not r0.associative:
        return Reason.NOT_ASSOCIATIVE
    if not r0.commutative:
        return Reason.NOT_COMMUTATIVE
    return None


def _check_subdiv(term: Term, position: int, param: int | None) -> Reason | None:
    if not 0 <= position < len(term.levels):
        return Reason.NO_SUCH_POSITION
    lv = term.levels[position]
    if lv.part != "whole":
        return Reason.ALREADY_SUBDIVIDED
    if param is None:
        return Reason.NO_BLOCK_SIZE
    e = term.extent(lv.index)
    if param <= 1 or param >= e:
        return Reason.TRIVIAL_BLOCK
    return None if e % param == 0 else Reason.BLOCK_NOT_DIVISOR


def _subdiv(term: Term, position: int, param: int | None) -> Term:
    assert param is not None  # _check_subdiv refused otherwise
    lv = term.levels[position]
    levels = term.levels[:position] + (Level(lv.index, "outer"), Level(lv.index, "inner")) \
        + term.levels[position + 1:]
    blocks = tuple(sorted(term.blocks + ((lv.index, param),)))
    return replace(term, levels=levels, blocks=blocks)


RULES: dict[str, Rule] = {r.name: r for r in (
    Rule("map-map flip", "36-37", "two nested maps swap; operands walked by both flip",
         False, _check_map_map, _swap),
    Rule("map-rnz exchange", "42", "a map and an rnz swap; the outer rnz reduces with lift r",
         False, _check_map_rnz, _swap),
    Rule("rnz-rnz exchange", "43", "two rnz with the same associative, commutative r swap",
         False, _check_rnz_rnz, _swap),
    Rule("subdivision", "44", "a level splits into blocks of b and the elements of a block",
         True, _check_subdiv, _subdiv),
)}


def apply_rule(term: Term, rule: str, position: int, param: int | None = None) -> Term | Refusal:
    """Apply the rule named ``rule`` (a key of :data:`RULES`) at ``position``.

    Examples
    --------
    >>> from fusionlab.explore.hof.contraction import contraction_term
    >>> t = contraction_term("ij,jk->ik", (4, 6), (6, 5))
    >>> apply_rule(t, "map-map flip", 0).order()
    ('mapB', 'mapA', 'rnz')
    """
    if rule not in RULES:
        raise KeyError(f"no rule {rule!r}; the rules are {sorted(RULES)}")
    return RULES[rule].apply(term, position, param)
