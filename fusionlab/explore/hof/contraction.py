"""A two-operand contraction, given as einsum subscripts and shapes, as a HoF term.

The start term is the textbook nest (eq. 51 for a matrix product): one ``map`` per output
index in the output's order, then one ``rnz`` per summed index in order of first appearance.

Examples
--------
>>> t = contraction_term("bij,bjk->bik", (2, 3, 4), (2, 4, 5))
>>> t.order()
('mapAB', 'mapA', 'mapB', 'rnz')
>>> contraction_term("ij,jk", (3, 4), (4, 2)).output
('i', 'k')
"""

from __future__ import annotations

from fusionlab.explore.hof.term import Level, Term

__all__ = ["contraction_term", "parse_subscripts"]


def parse_subscripts(subscripts: str) -> tuple[tuple[str, str], str]:
    """Split ``"ij,jk->ik"`` into ``(("ij", "jk"), "ik")``; no ``->`` means einsum's implicit output.

    Raises ``ValueError`` (saying how to fix it) for anything but two operands of distinct
    letters whose output letters appear in an operand.
    """
    s = subscripts.replace(" ", "")
    if "." in s:
        raise ValueError(f"{subscripts!r}: write the batch axes as letters instead of '...'")
    lhs, arrow, out = s.partition("->")
    ops = lhs.split(",")
    if len(ops) != 2:
        raise ValueError(f"{subscripts!r}: a contraction here has exactly two operands")
    for op in ops:
        if not op.isalpha() or len(set(op)) != len(op):
            raise ValueError(f"{subscripts!r}: each operand needs distinct letters (no diagonals)")
    if not arrow:
        counts = {c: (ops[0] + ops[1]).count(c) for c in ops[0] + ops[1]}
        out = "".join(sorted(c for c, n in counts.items() if n == 1))
    if len(set(out)) != len(out) or not set(out) <= set(ops[0] + ops[1]):
        raise ValueError(f"{subscripts!r}: output letters must be distinct and appear in an operand")
    return (ops[0], ops[1]), out


def contraction_term(subscripts: str, shape_a: tuple[int, ...], shape_b: tuple[int, ...]) -> Term:
    """The textbook HoF term of ``np.einsum(subscripts, A, B)`` for the given shapes."""
    (sa, sb), out = parse_subscripts(subscripts)
    extents: dict[str, int] = {}
    for letters, shape, name in ((sa, shape_a, "A"), (sb, shape_b, "B")):
        if len(letters) != len(shape):
            raise ValueError(f"{subscripts!r}: {name} has shape {shape}, {len(letters)} letters")
        for c, e in zip(letters, shape):
            if extents.setdefault(c, int(e)) != int(e):
                raise ValueError(f"{subscripts!r}: index {c!r} has extents {extents[c]} and {e}")
    summed = [c for c in dict.fromkeys(sa + sb) if c not in out]
    levels = tuple(Level(c) for c in tuple(out) + tuple(summed))
    return Term(operands=(tuple(sa), tuple(sb)), output=tuple(out),
                extents=tuple(sorted(extents.items())), levels=levels)
