"""HoF terms of a two-operand contraction, and their printing as in paper 003.

A :class:`Term` is the paper's linear nesting of higher-order functions (§4: "this kind of
nesting forms a list"): one :class:`Level` per loop index, outermost first. A level over an
output index is a ``map`` (``zip`` when it walks both operands, a batch index); a level over
a summed index is an ``rnz``. A subdivided index (eq. 44) contributes two levels, its blocks
(``part='outer'``) and the elements of a block (``part='inner'``).

The operands' logical layouts (``flip`` / ``subdiv`` of eq. 12-13) are not stored: they are
a function of the nesting (each level consumes the outermost remaining dimension of every
operand it walks), so two derivations reaching the same nesting give the same term, and
:meth:`Term.views` derives them for printing.

Examples
--------
>>> t = Term(operands=(("i", "j"), ("j", "k")), output=("i", "k"),
...          extents=(("i", 4), ("j", 6), ("k", 5)),
...          levels=(Level("i"), Level("k"), Level("j")))
>>> print(t)
map (\\a0 -> map (\\b1 -> rnz (+) (*) a0 b1) (flip 0 B)) A
>>> t.order()
('mapA', 'mapB', 'rnz')
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal as TypingLiteral

__all__ = ["Level", "Term", "REDUCERS", "Reducer"]

Part = TypingLiteral["whole", "outer", "inner"]


@dataclass(frozen=True)
class Reducer:
    """A reduction operator of an ``rnz`` and the laws eq. 43 needs."""

    name: str
    associative: bool
    commutative: bool


#: The reducers a term may carry; ``+`` is a contraction's, the others exist so the side
#: condition of the rnz-rnz exchange (eq. 43) can be exercised.
REDUCERS: dict[str, Reducer] = {
    "+": Reducer("+", True, True),
    "max": Reducer("max", True, True),
    "first": Reducer("first", True, False),   # keeps the left element: not commutative
}


@dataclass(frozen=True)
class Level:
    """One HoF of the nest: the loop over ``index`` (or one part of it, once subdivided)."""

    index: str
    part: Part = "whole"

    def name(self) -> str:
        """The loop variable of this level in generated code (``j``, ``j_o``, ``j_i``)."""
        return {"whole": self.index, "outer": self.index + "_o", "inner": self.index + "_i"}[self.part]


@dataclass(frozen=True)
class Term:
    """A contraction ``out[output] = sum over the rest of A[operands[0]] * B[operands[1]]``.

    Parameters
    ----------
    operands
        The index letters of each operand's axes, in storage order.
    output
        The output's index letters, in its storage order.
    extents
        ``(letter, extent)`` for every letter, sorted by letter.
    levels
        The nest, outermost first; every letter appears once, or twice (outer then inner
        part somewhere) when it is subdivided.
    blocks
        ``(letter, block size)`` of the subdivided letters, sorted.
    reducers
        ``(letter, reducer name)`` of summed letters whose reducer is not ``+``.
    """

    operands: tuple[tuple[str, ...], tuple[str, ...]]
    output: tuple[str, ...]
    extents: tuple[tuple[str, int], ...]
    levels: tuple[Level, ...]
    blocks: tuple[tuple[str, int], ...] = ()
    reducers: tuple[tuple[str, str], ...] = field(default=())

    # -- facts about letters -------------------------------------------------------------
    def extent(self, letter: str) -> int:
        """The extent of ``letter``."""
        return dict(self.extents)[letter]

    def block(self, letter: str) -> int | None:
        """The block size ``letter`` is subdivided by, or ``None``."""
        return dict(self.blocks).get(letter)

    def reducer(self, letter: str) -> Reducer:
        """The reducer of a summed letter (``+`` unless the term says otherwise)."""
        return REDUCERS[dict(self.reducers).get(letter, "+")]

    def is_map(self, level: Level) -> bool:
        """True when ``level`` walks an output index (a map / zip), False for an rnz."""
        return level.index in self.output

    def level_extent(self, level: Level) -> int:
        """The trip count of ``level``."""
        b = self.block(level.index)
        e = self.extent(level.index)
        return {"whole": e, "outer": e // b if b else e, "inner": b or e}[level.part]

    def walks(self, level: Level) -> tuple[int, ...]:
        """The operands (0 for A, 1 for B) whose structure ``level`` consumes."""
        return tuple(n for n, idx in enumerate(self.operands) if level.index in idx)

    def label(self, level: Level) -> str:
        """The paper's name of a level: ``mapA``, ``mapB``, ``mapAB`` (batch) or ``rnz``."""
        if not self.is_map(level):
            return "rnz"
        return "map" + "".join("AB"[n] for n in self.walks(level))

    def order(self) -> tuple[str, ...]:
        """The HoF order, outermost first, as Tables 1 and 2 of the paper print it."""
        return tuple(self.label(lv) for lv in self.levels)

    # -- layouts -------------------------------------------------------------------------
    def views(self) -> tuple[str, str]:
        """Each operand's logical layout as the paper writes it (``flip 0 (subdiv 1 16 A)``).

        Dimensions are numbered as in the paper: 0 is the innermost (fastest) one. The
        stored axes are first subdivided (eq. 12; blocks outside elements), then flipped by
        adjacent swaps until their order is the order the nest consumes them in.
        """
        return tuple(self._view(n) for n in range(2))  # type: ignore[return-value]

    def _view(self, n: int) -> str:
        text = "AB"[n]
        stored: list[Level] = []
        for letter in self.operands[n]:
            b = self.block(letter)
            if b is None:
                stored.append(Level(letter))
                continue
            # paper's subdiv d b: dimension d (from the innermost) splits, blocks outside
            d = len(self.operands[n]) - 1 - self.operands[n].index(letter)
            text = f"subdiv {d} {b} {_paren(text)}"
            stored += [Level(letter, "outer"), Level(letter, "inner")]
        wanted = [lv for lv in self.levels if lv in stored]
        cur = list(stored)
        depth = len(cur)
        # bubble the stored order into the wanted one; each swap is a flip of two dims
        for pos, lv in enumerate(wanted):
            at = cur.index(lv)
            while at > pos:
                cur[at - 1], cur[at] = cur[at], cur[at - 1]
                d = depth - 1 - at
                text = f"flip {d} {_paren(text)}"
                at -= 1
        return text

    # -- printing ------------------------------------------------------------------------
    def __str__(self) -> str:
        return self._text(0, {0: _paren_view(self.views()[0]), 1: _paren_view(self.views()[1])})

    def _reduce_op(self, pos: int) -> str:
        """The reducer of the rnz at ``pos``, lifted (``zip (+)``) once per map inside it."""
        op = f"({self.reducer(self.levels[pos].index).name})"
        for inner in self.levels[pos + 1:]:
            if self.is_map(inner):
                op = f"zip {_paren(op)}"
        return op

    def _text(self, pos: int, names: dict[int, str]) -> str:
        if pos == len(self.levels):
            return f"{names[0]} * {names[1]}"
        lv = self.levels[pos]
        walks = self.walks(lv)
        params = {n: f"{'ab'[n]}{pos}" for n in walks}
        inner = dict(names)
        inner.update(params)
        body = self._text(pos + 1, inner)
        args = " ".join(names[n] for n in walks)
        if not self.is_map(lv):
            red = _paren(self._reduce_op(pos))
            if pos == len(self.levels) - 1 and walks == (0, 1):
                return f"rnz {red} (*) {args}"        # eta-reduced dot product (eq. 29)
            lam = "\\" + " ".join(params[n] for n in walks) + " -> " + body
            return f"rnz {red} ({lam}) {args}"
        hof = "map" if len(walks) == 1 else "zip"
        lam = "\\" + " ".join(params[n] for n in walks) + " -> " + body
        return f"{hof} ({lam}) {args}"


def _paren(text: str) -> str:
    return text if " " not in text or text.startswith("(") else f"({text})"


def _paren_view(text: str) -> str:
    return f"({text})" if " " in text else text
