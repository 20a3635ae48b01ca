"""The explicit einsum subscripts of NumPy's two-operand products, from operand shapes alone.

``a @ b`` (``np.matmul``), ``np.dot``, ``np.inner``, ``np.outer`` and ``np.einsum`` with two
operands are each a CONTRACT (docs/contractions.md, "Contractions in the bytecode") whose
``subscripts`` these functions derive, following each NumPy entry point's own rule: matmul
promotes a 1-D operand to a matrix and removes the added axis again and broadcasts batch
axes; dot sums over ``a``'s last and ``b``'s second-to-last axis; inner over both last
axes; outer multiplies the flattened operands; einsum's implicit output is the letters used
once, in ASCII order, after the broadcast (``...``) axes. ``None`` means the product has no
explicit two-operand form with one extent per letter (a scalar operand, a repeated letter,
a batch axis of length 1 broadcast against a longer one): capture then records it as
OPAQUE. The capture layer and the bytecode checker (``via=``) share these functions.

Examples
--------
>>> matmul_subscripts((3, 4), (4, 5)), matmul_subscripts((4,), (2, 4, 5))
('ij,jk->ik', 'i,jik->jk')
>>> dot_subscripts((2, 3, 4), (5, 4, 6))
'ijk,lkm->ijlm'
>>> einsum_subscripts("ij,jk", (3, 4), (4, 5)), einsum_subscripts("...ij,...jk->...ik", (2, 3, 4), (2, 4, 5))
('ij,jk->ik', 'lij,ljk->lik')
>>> matmul_subscripts((2, 3, 4), (1, 4, 5)) is None    # a broadcast batch axis
True
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

__all__ = ["VIAS", "matmul_subscripts", "dot_subscripts", "inner_subscripts", "outer_subscripts",
           "einsum_subscripts", "via_subscripts", "numpy_call"]

Shape = Sequence[int]
# letters in order of first appearance: "ij,jk->ik" for a matrix product, as people write it
_ORDER = "ijklmnopqrstuvwxyzabcdefghABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _spell(a: Sequence[str], b: Sequence[str], out: Sequence[str]) -> str | None:
    """Symbolic axis tokens renamed to letters in order of first appearance."""
    names: dict[str, str] = {}
    for t in (*a, *b, *out):
        if t not in names:
            if len(names) == len(_ORDER):
                return None
            names[t] = _ORDER[len(names)]
    return "".join(names[t] for t in a) + "," + "".join(names[t] for t in b) + "->" + "".join(names[t] for t in out)


def _batch(sa: Shape, sb: Shape) -> tuple[list[str], list[str], list[str]] | None:
    """Right-aligned batch axes as tokens; None when a length differs (a broadcast of 1)."""
    n = max(len(sa), len(sb))
    for k in range(1, min(len(sa), len(sb)) + 1):
        if sa[-k] != sb[-k]:
            return None
    tokens = [f"b{p}" for p in range(n)]
    return tokens[n - len(sa):], tokens[n - len(sb):], tokens


def matmul_subscripts(sa: Shape, sb: Shape) -> str | None:
    """``np.matmul(a, b)``: a 1-D operand is promoted to a matrix (the added axis then
    removed), batch axes broadcast (equal lengths only, see the module's docstring)."""
    if not sa or not sb:
        return None
    got = _batch(sa[:-2] if len(sa) >= 2 else (), sb[:-2] if len(sb) >= 2 else ())
    if got is None:
        return None
    ba, bb, bo = got
    a = ba + (["m", "k"] if len(sa) >= 2 else ["k"])
    b = bb + (["k", "n"] if len(sb) >= 2 else ["k"])
    out = bo + (["m"] if len(sa) >= 2 else []) + (["n"] if len(sb) >= 2 else [])
    return _spell(a, b, out)


def dot_subscripts(sa: Shape, sb: Shape) -> str | None:
    """``np.dot(a, b)``: the sum over ``a``'s last axis and ``b``'s second-to-last (its
    only one when 1-D); the output is ``a``'s other axes, then ``b``'s."""
    if not sa or not sb:
        return None
    a = [f"a{p}" for p in range(len(sa) - 1)] + ["k"]
    if len(sb) == 1:
        return _spell(a, ["k"], a[:-1])
    b = [f"c{p}" for p in range(len(sb) - 2)] + ["k", "n"]
    return _spell(a, b, a[:-1] + b[:-2] + ["n"])


def inner_subscripts(sa: Shape, sb: Shape) -> str | None:
    """``np.inner(a, b)``: the sum over both last axes; ``a``'s other axes, then ``b``'s."""
    if not sa or not sb:
        return None
    a = [f"a{p}" for p in range(len(sa) - 1)] + ["k"]
    b = [f"c{p}" for p in range(len(sb) - 1)] + ["k"]
    return _spell(a, b, a[:-1] + b[:-1])


def outer_subscripts(sa: Shape, sb: Shape) -> str | None:
    """``np.outer(a, b)`` of 1-D operands (NumPy flattens others first; capture does too)."""
    if len(sa) != 1 or len(sb) != 1:
        return None
    return "i,j->ij"


def _terms(subscripts: str) -> tuple[list[str], str | None] | None:
    """The operand terms and the output term (None: implicit) of einsum subscripts, or None
    when it is not two operands spelled with letters and at most one ``...`` each."""
    lhs, arrow, out = subscripts.replace(" ", "").partition("->")
    ops = lhs.split(",")
    if len(ops) != 2:
        return None
    for t in ops + ([out] if arrow else []):
        if t.count("...") > 1 or not all(c.isascii() and c.isalpha() for c in t.replace("...", "")):
            return None
    return ops, out if arrow else None


def _expand(term: str, ndim: int, ellipsis: list[str]) -> list[str] | None:
    """One operand's letters with ``...`` replaced by its (right-aligned) broadcast axes."""
    head, dots, tail = term.partition("...")
    n = ndim - len(head) - len(tail)
    if n < 0 or n and not dots:
        return None
    return list(head) + (ellipsis[len(ellipsis) - n:] if n else []) + list(tail)


def einsum_subscripts(subscripts: str, sa: Shape, sb: Shape) -> str | None:
    """``np.einsum(subscripts, a, b)`` in the explicit form, ``...`` spelled with letters of
    its own; None for a repeated letter in a term (a diagonal) or a ``...`` whose axes
    broadcast a length of 1."""
    got = _terms(subscripts)
    if got is None:
        return None
    (ta, tb), tout = got
    used = set((ta + tb + (tout or "")).replace(".", ""))
    free = [c for c in _ORDER if c not in used]
    na = len(sa) - len(ta.replace("...", ""))
    nb = len(sb) - len(tb.replace("...", ""))
    if min(na, nb) < 0 or max(na, nb) > len(free):
        return None
    at, bt = len(ta.partition("...")[0]), len(tb.partition("...")[0])
    if _batch(sa[at:at + na], sb[bt:bt + nb]) is None:
        return None
    ellipsis = free[:max(na, nb)]
    a, b = _expand(ta, len(sa), ellipsis), _expand(tb, len(sb), ellipsis)
    if a is None or b is None or len(set(a)) != len(a) or len(set(b)) != len(b):
        return None
    if tout is None:
        once = sorted(c for c in set(a) ^ set(b) if c not in ellipsis)
        out = [c for c in ellipsis if c in a or c in b] + once
    else:
        head, dots, tail = tout.partition("...")
        out = list(head) + (ellipsis if dots else []) + list(tail)
    if len(set(out)) != len(out) or not set(out) <= set(a) | set(b):
        return None
    return "".join(a) + "," + "".join(b) + "->" + "".join(out)


#: the NumPy entry points a CONTRACT replays (``via=``), each with its subscripts' rule;
#: ``einsum`` takes any subscripts
VIAS: dict[str, Callable[[Shape, Shape], str | None]] = {
    "matmul": matmul_subscripts, "dot": dot_subscripts, "inner": inner_subscripts, "outer": outer_subscripts,
}


def via_subscripts(via: str, sa: Shape, sb: Shape) -> str | None:
    """The subscripts NumPy's ``via`` function computes for operands of these shapes.

    >>> via_subscripts("inner", (3, 4), (5, 4))
    'ij,kj->ik'
    """
    return VIAS[via](sa, sb)


def numpy_call(via: str, subscripts: str) -> Callable[[Any, Any], Any]:
    """The NumPy call a CONTRACT replays: the user's own function (``np.matmul`` for ``@``),
    so a contraction that runs alone gives NumPy's bits; ``np.einsum`` with the explicit
    subscripts for ``via="einsum"``.

    >>> import numpy as np
    >>> numpy_call("matmul", "ij,jk->ik") is np.matmul
    True
    >>> numpy_call("einsum", "i,i->")(np.arange(3.0), np.arange(3.0))
    np.float64(5.0)
    """
    import numpy as np

    fn = {"matmul": np.matmul, "dot": np.dot, "inner": np.inner, "outer": np.outer}.get(via)
    if fn is not None:
        return fn
    return lambda a, b: np.einsum(subscripts, a, b)
