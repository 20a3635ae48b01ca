"""Pipelines of HoFs on vectors and the paper's fusion rules (eq. 19-34), with an evaluator.

The exchange rules of :mod:`.rules` rearrange *nested* HoFs; the rules here fuse HoFs that
form a *pipeline* (the output of one is the input of the next) and pair HoFs side by side
(products). Terms are :class:`Arr` (an input vector), :class:`NZip` (the n-ary map / zip of
eq. 20; ``map`` with one argument, ``zip`` with two), :class:`Reduce`, :class:`Rnz`
(eq. 26) and :class:`Pair` (a product of two values, eq. 30). Functions are :class:`Lam`
(a lambda over scalars), :class:`Prod` (the function product ``(f, g)`` of eq. 31) and
:class:`FanOut` (eq. 32).

Rules, in :data:`PIPELINE_RULES` (position: the path of child indices to the node):

- ``map-map fusion`` (19): ``map f (map g x) = map (f . g) x``;
- ``nzip fusion`` (25): ``nzip f xs (nzip g ys) xs' = nzip (ncomp i f g) xs ys xs'``;
- ``rnz absorption`` (27-28): an nzip argument of an rnz joins its zipping function;
- ``reduce of zip`` (29): ``reduce r (nzip g ys) = rnz r g ys``;
- ``map product`` (31, 33): ``(nzip f xs, nzip g ys) = nzip (f, g) (x0, y0) ...``;
- ``fan-out`` (32): ``(map f x, map g x) = map (fanOut f g) x``;
- ``reduce product`` (34): ``(reduce f x, reduce g y) = reduce (f, g) (x, y)``.

Examples
--------
>>> import numpy as np
>>> u, v = Arr("u"), Arr("v")
>>> t = Reduce(PLUS, NZip(TIMES, (NZip(lam("x", ("relu", "x")), (u,)), v)))
>>> print(t)
reduce (+) (zip (*) (map (\\x -> relu x) u) v)
>>> t1 = apply_pipeline_rule(t, "reduce of zip", ())
>>> t2 = apply_pipeline_rule(t1, "rnz absorption", (), 0)
>>> print(t2)
rnz (+) (\\x b -> (relu x) * b) u v
>>> env = {"u": np.array([-1.0, 2.0]), "v": np.array([3.0, 4.0])}
>>> float(evaluate(t, env)), float(evaluate(t2, env))
(8.0, 8.0)
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace
from typing import Callable, Union

import numpy as np

from fusionlab.explore.hof.rules import Reason, Refusal

__all__ = ["Arr", "NZip", "Reduce", "Rnz", "Pair", "Lam", "Prod", "FanOut", "lam", "PLUS",
           "TIMES", "ncomp", "evaluate", "PipelineRule", "PIPELINE_RULES", "apply_pipeline_rule",
           "positions"]

# -- scalar lambdas -------------------------------------------------------------------------
#: scalar expression: a variable name, or (operator, argument, ...)
SExpr = Union[str, tuple]

_OPS: dict[str, tuple[int, Callable[..., object]]] = {
    "+": (2, np.add), "*": (2, np.multiply), "-": (2, np.subtract), "max": (2, np.maximum),
    "neg": (1, np.negative), "relu": (1, lambda x: np.maximum(x, 0.0)), "sq": (1, np.square),
}


@dataclass(frozen=True)
class Lam:
    """``\\params -> body`` over scalars; ``body`` is a name or ``(op, arg, ...)``."""

    params: tuple[str, ...]
    body: SExpr

    def __str__(self) -> str:
        if isinstance(self.body, tuple) and len(self.body) == 3 and self.body[1:] == self.params \
                and self.body[0] in ("+", "*", "-"):
            return f"({self.body[0]})"                       # an eta-reduced operator
        return "\\" + " ".join(self.params) + " -> " + _stext(self.body, top=True)


@dataclass(frozen=True)
class Prod:
    """The function product ``(f, g)`` (eq. 31): applies ``f`` and ``g`` componentwise."""

    fns: tuple["Fn", ...]

    def __str__(self) -> str:
        return "(" + ", ".join(str(f) for f in self.fns) + ")"


@dataclass(frozen=True)
class FanOut:
    """``fanOut f g`` (eq. 32): both functions of the same arguments, as a pair."""

    fns: tuple["Fn", ...]

    def __str__(self) -> str:
        return "fanOut " + " ".join(_wrap(str(f)) for f in self.fns)


Fn = Union[Lam, Prod, FanOut]


def lam(*spec: object) -> Lam:
    """``lam("x", "y", ("*", "x", "y"))``: parameters, then the body.

    >>> print(lam("x", ("relu", "x")))
    \\x -> relu x
    """
    return Lam(tuple(str(p) for p in spec[:-1]), spec[-1])  # type: ignore[arg-type]


PLUS = lam("a", "b", ("+", "a", "b"))
TIMES = lam("a", "b", ("*", "a", "b"))


def _stext(e: SExpr, top: bool = False) -> str:
    if isinstance(e, str):
        return e
    op, *args = e
    if _OPS[op][0] == 2 and op in "+*-":
        text = f"{_stext(args[0])} {op} {_stext(args[1])}"
    else:
        text = op + " " + " ".join(_stext(a) for a in args)
    return text if top else f"({text})"


def _wrap(text: str) -> str:
    return text if text.startswith("(") or " " not in text else f"({text})"


# -- array terms ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Arr:
    """An input vector, by name."""

    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class NZip:
    """The n-ary map / zip of eq. 20: ``f`` applied elementwise to ``args``."""

    fn: Fn
    args: tuple["Expr", ...]

    def __str__(self) -> str:
        hof = {1: "map", 2: "zip"}.get(len(self.args), "nzip")
        return f"{hof} {_wrap(str(self.fn))} " + " ".join(_wrap(str(a)) for a in self.args)


@dataclass(frozen=True)
class Reduce:
    """``reduce r x`` (eq. 16) over the vector ``x``."""

    fn: Fn
    arg: "Expr"

    def __str__(self) -> str:
        return f"reduce {_wrap(str(self.fn))} {_wrap(str(self.arg))}"


@dataclass(frozen=True)
class Rnz:
    """``rnz r f xs`` (eq. 26): reduce with ``r`` the elementwise ``f`` of ``xs``."""

    red: Fn
    fn: Fn
    args: tuple["Expr", ...]

    def __str__(self) -> str:
        return f"rnz {_wrap(str(self.red))} {_wrap(str(self.fn))} " + " ".join(_wrap(str(a)) for a in self.args)


@dataclass(frozen=True)
class Pair:
    """A product of two values (eq. 30-34)."""

    items: tuple["Expr", ...]

    def __str__(self) -> str:
        return "(" + ", ".join(str(a) for a in self.items) + ")"


Expr = Union[Arr, NZip, Reduce, Rnz, Pair]


# -- composition (eq. 23-24) ----------------------------------------------------------------
def _names(e: SExpr) -> set[str]:
    return {e} if isinstance(e, str) else set().union(*(_names(a) for a in e[1:]))


def _subst(e: SExpr, env: dict[str, SExpr]) -> SExpr:
    if isinstance(e, str):
        return env.get(e, e)
    return (e[0],) + tuple(_subst(a, env) for a in e[1:])


def ncomp(i: int, f: Lam, g: Lam) -> Lam:
    """Compose ``g`` before the ``i``-th argument of ``f`` (eq. 23-24), renaming apart.

    >>> print(ncomp(1, TIMES, lam("x", ("relu", "x"))))
    \\a x -> a * (relu x)
    """
    used = set(f.params) | _names(f.body)
    fresh: dict[str, SExpr] = {}
    for p in g.params:
        name = p
        for k in itertools.count(1):
            if name not in used:
                break
            name = f"{p}{k}"
        used.add(name)
        fresh[p] = name
    g_body = _subst(g.body, fresh)
    params = f.params[:i] + tuple(str(fresh[p]) for p in g.params) + f.params[i + 1:]
    return Lam(params, _subst(f.body, {f.params[i]: g_body}))


# -- evaluation -----------------------------------------------------------------------------
Value = Union[np.ndarray, tuple]


def _apply(fn: Fn, args: list[Value]) -> Value:
    if isinstance(fn, Prod):
        return tuple(_apply(f, [a[k] for a in args]) for k, f in enumerate(fn.fns))
    if isinstance(fn, FanOut):
        return tuple(_apply(f, args) for f in fn.fns)
    env = dict(zip(fn.params, args))
    return _seval(fn.body, env)


def _seval(e: SExpr, env: dict[str, Value]) -> Value:
    if isinstance(e, str):
        return env[e]
    return _OPS[e[0]][1](*(_seval(a, env) for a in e[1:]))


def _row(v: Value, t: int) -> Value:
    return tuple(_row(x, t) for x in v) if isinstance(v, tuple) else v[t]


def _length(v: Value) -> int:
    return _length(v[0]) if isinstance(v, tuple) else len(v)


def _reduce(fn: Fn, v: Value) -> Value:
    acc = _row(v, 0)
    for t in range(1, _length(v)):   # left to right, as the rules assume nothing more
        acc = _apply(fn, [acc, _row(v, t)])
    return acc


def evaluate(term: Expr, env: dict[str, np.ndarray]) -> Value:
    """The value of ``term`` with the vectors of ``env`` (elementwise functions vectorised)."""
    if isinstance(term, Arr):
        return env[term.name]
    if isinstance(term, Pair):
        return tuple(evaluate(a, env) for a in term.items)
    if isinstance(term, NZip):
        return _apply(term.fn, [evaluate(a, env) for a in term.args])
    if isinstance(term, Reduce):
        return _reduce(term.fn, evaluate(term.arg, env))
    return _reduce(term.red, _apply(term.fn, [evaluate(a, env) for a in term.args]))


# -- rules ----------------------------------------------------------------------------------
def _children(term: Expr) -> tuple[Expr, ...]:
    if isinstance(term, (NZip, Rnz)):
        return term.args
    if isinstance(term, Reduce):
        return (term.arg,)
    if isinstance(term, Pair):
        return term.items
    return ()


def _with_child(term: Expr, k: int, new: Expr) -> Expr:
    if isinstance(term, Reduce):
        return replace(term, arg=new)
    if isinstance(term, Pair):
        return replace(term, items=term.items[:k] + (new,) + term.items[k + 1:])
    return replace(term, args=term.args[:k] + (new,) + term.args[k + 1:])  # type: ignore[arg-type]


def positions(term: Expr, here: tuple[int, ...] = ()) -> list[tuple[int, ...]]:
    """Every node's path (child indices from the root), root first."""
    out = [here]
    for k, c in enumerate(_children(term)):
        out += positions(c, here + (k,))
    return out


def _at(term: Expr, path: tuple[int, ...]) -> Expr | None:
    for k in path:
        kids = _children(term)
        if not 0 <= k < len(kids):
            return None
        term = kids[k]
    return term


def _replace_at(term: Expr, path: tuple[int, ...], new: Expr) -> Expr:
    if not path:
        return new
    return _with_child(term, path[0], _replace_at(_children(term)[path[0]], path[1:], new))


Local = Callable[[Expr, "int | None"], "Expr | Reason"]


def _map_map(t: Expr, _i: int | None) -> Expr | Reason:
    if not (isinstance(t, NZip) and len(t.args) == 1 and isinstance(t.args[0], NZip)
            and len(t.args[0].args) == 1):
        return Reason.NOT_MAP_OF_MAP
    g = t.args[0]
    if not (isinstance(t.fn, Lam) and isinstance(g.fn, Lam)):
        return Reason.NOT_A_LAMBDA
    return NZip(ncomp(0, t.fn, g.fn), g.args)


def _absorb(t: Expr, i: int | None, kind: type) -> Expr | Reason:
    if not isinstance(t, kind):
        return Reason.NOT_NZIP if kind is NZip else Reason.NOT_RNZ
    args = t.args  # type: ignore[attr-defined]
    if i is None or not 0 <= i < len(args):
        return Reason.NO_SUCH_ARGUMENT
    g = args[i]
    if not isinstance(g, NZip):
        return Reason.NOT_NZIP_ARGUMENT
    if not (isinstance(t.fn, Lam) and isinstance(g.fn, Lam)):  # type: ignore[attr-defined]
        return Reason.NOT_A_LAMBDA
    fn = ncomp(i, t.fn, g.fn)  # type: ignore[attr-defined]
    return replace(t, fn=fn, args=args[:i] + g.args + args[i + 1:])  # type: ignore[arg-type]


def _reduce_zip(t: Expr, _i: int | None) -> Expr | Reason:
    if not (isinstance(t, Reduce) and isinstance(t.arg, NZip)):
        return Reason.NOT_REDUCE_OF_NZIP
    return Rnz(t.fn, t.arg.fn, t.arg.args)


def _map_product(t: Expr, _i: int | None) -> Expr | Reason:
    if not (isinstance(t, Pair) and len(t.items) == 2 and all(isinstance(x, NZip) for x in t.items)):
        return Reason.NOT_PAIR_OF_NZIPS
    f, g = t.items
    if len(f.args) != len(g.args):  # type: ignore[union-attr]
        return Reason.ARITY_MISMATCH
    return NZip(Prod((f.fn, g.fn)), tuple(Pair((x, y)) for x, y in zip(f.args, g.args)))  # type: ignore[union-attr]


def _fan_out(t: Expr, _i: int | None) -> Expr | Reason:
    if not (isinstance(t, Pair) and len(t.items) == 2 and all(isinstance(x, NZip) for x in t.items)):
        return Reason.NOT_PAIR_OF_NZIPS
    f, g = t.items
    if f.args != g.args:  # type: ignore[union-attr]
        return Reason.DIFFERENT_ARGUMENTS
    return NZip(FanOut((f.fn, g.fn)), f.args)  # type: ignore[union-attr]


def _reduce_product(t: Expr, _i: int | None) -> Expr | Reason:
    if not (isinstance(t, Pair) and len(t.items) == 2 and all(isinstance(x, Reduce) for x in t.items)):
        return Reason.NOT_PAIR_OF_REDUCES
    f, g = t.items
    return Reduce(Prod((f.fn, g.fn)), Pair((f.arg, g.arg)))  # type: ignore[union-attr]


@dataclass(frozen=True)
class PipelineRule:
    """A named fusion rule of paper 003 acting on the node at a path; ``param`` picks an argument."""

    name: str
    equation: str
    takes_param: bool
    local: Local

    def apply(self, term: Expr, path: tuple[int, ...], param: int | None = None) -> Expr | Refusal:
        """The rewritten whole term, or a :class:`~fusionlab.explore.hof.rules.Refusal` with the reason."""
        node = _at(term, path)
        if node is None:
            return Refusal(self.name, len(path), Reason.NO_SUCH_POSITION)
        new = self.local(node, param)
        if isinstance(new, Reason):
            return Refusal(self.name, len(path), new)
        return _replace_at(term, path, new)


PIPELINE_RULES: dict[str, PipelineRule] = {r.name: r for r in (
    PipelineRule("map-map fusion", "19", False, _map_map),
    PipelineRule("nzip fusion", "20-25", True, lambda t, i: _absorb(t, i, NZip)),
    PipelineRule("rnz absorption", "26-28", True, lambda t, i: _absorb(t, i, Rnz)),
    PipelineRule("reduce of zip", "29", False, _reduce_zip),
    PipelineRule("map product", "31, 33", False, _map_product),
    PipelineRule("fan-out", "32", False, _fan_out),
    PipelineRule("reduce product", "34", False, _reduce_product),
)}


def apply_pipeline_rule(term: Expr, rule: str, path: tuple[int, ...],
                        param: int | None = None) -> Expr | Refusal:
    """Apply the fusion rule named ``rule`` to the node at ``path`` of ``term``.

    >>> u = Arr("u")
    >>> t = NZip(lam("x", ("neg", "x")), (NZip(lam("y", ("sq", "y")), (u,)),))
    >>> print(apply_pipeline_rule(t, "map-map fusion", ()))
    map (\\y -> neg (sq y)) u
    >>> apply_pipeline_rule(u, "map-map fusion", ()).reason.name
    'NOT_MAP_OF_MAP'
    """
    if rule not in PIPELINE_RULES:
        raise KeyError(f"no rule {rule!r}; the fusion rules are {sorted(PIPELINE_RULES)}")
    return PIPELINE_RULES[rule].apply(term, path, param)
