"""The opcodes and the one table of what each one is (:data:`OPCODES`).

Every per-opcode fact lives in one :class:`OpInfo` row here: its family, how many inputs it
takes, the attributes it accepts and what they mean, its spellings in the text format and in
NumPy, the NumPy function it is, the Numba scalar expression a kernel computes it with, a
reduction's identity, combine and partial-results method, and the time model's classes.
The bytecode checks instructions with it, capture maps ufuncs to opcodes with it, the
reference executor calls its NumPy functions and codegen writes its Numba expressions:
adding an opcode is one enum member and one row (``docs/ir.md``, "Per-opcode facts").

This module is the bottom of the pipeline: it imports NumPy and nothing of fusionlab.
:mod:`fusionlab.ir.bytecode` re-exports :class:`Opcode`, :class:`OpFamily` and :data:`ALIASES`.

Examples
--------
>>> Opcode.DIVIDE.info.arity, Opcode.DIVIDE.info.family, Opcode.DIVIDE.info.cost
(2, 'binary', ('division',))
>>> Opcode.ADD.info.scalar(["x", "y"])
'x + y'
>>> Opcode.FLOOR_DIVIDE.info.scalar(["x", "y"], "int64")
'(-x if y == -1 else x // y)'
>>> opcode_of_ufunc("true_divide", "__call__"), opcode_of_ufunc("maximum", "accumulate")
(<Opcode.DIVIDE: 'divide'>, <Opcode.MAXIMUM_ACCUMULATE: 'maximum.accumulate'>)
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Callable, Mapping, Sequence

import numpy as np

__all__ = ["Opcode", "OpFamily", "OpInfo", "OPCODES", "ALIASES", "FAMILIES", "opcode_of_ufunc", "HALF_POWERS",
           "MOST_PRODUCTS", "power_without_pow"]


class Opcode(enum.Enum):
    """Every instruction kind. Element-wise values are the NumPy ufunc names."""

    # element-wise unary
    ABSOLUTE = "absolute"
    NEGATIVE = "negative"
    POSITIVE = "positive"
    SQRT = "sqrt"
    SQUARE = "square"
    EXP = "exp"
    EXP2 = "exp2"
    EXPM1 = "expm1"
    LOG = "log"
    LOG2 = "log2"
    LOG10 = "log10"
    LOG1P = "log1p"
    SIN = "sin"
    COS = "cos"
    TAN = "tan"
    ARCSIN = "arcsin"
    ARCCOS = "arccos"
    ARCTAN = "arctan"
    SINH = "sinh"
    COSH = "cosh"
    TANH = "tanh"
    FLOOR = "floor"
    CEIL = "ceil"
    RINT = "rint"
    TRUNC = "trunc"
    SIGN = "sign"
    RECIPROCAL = "reciprocal"
    LOGICAL_NOT = "logical_not"
    INVERT = "invert"
    ISNAN = "isnan"
    ISINF = "isinf"
    ISFINITE = "isfinite"
    # element-wise binary
    ADD = "add"
    SUBTRACT = "subtract"
    MULTIPLY = "multiply"
    DIVIDE = "divide"
    FLOOR_DIVIDE = "floor_divide"
    REMAINDER = "remainder"
    POWER = "power"
    MAXIMUM = "maximum"
    MINIMUM = "minimum"
    FMAX = "fmax"
    FMIN = "fmin"
    ARCTAN2 = "arctan2"
    HYPOT = "hypot"
    LESS = "less"
    LESS_EQUAL = "less_equal"
    GREATER = "greater"
    GREATER_EQUAL = "greater_equal"
    EQUAL = "equal"
    NOT_EQUAL = "not_equal"
    LOGICAL_AND = "logical_and"
    LOGICAL_OR = "logical_or"
    LOGICAL_XOR = "logical_xor"
    BITWISE_AND = "bitwise_and"
    BITWISE_OR = "bitwise_or"
    BITWISE_XOR = "bitwise_xor"
    LEFT_SHIFT = "left_shift"
    RIGHT_SHIFT = "right_shift"
    # element-wise ternary: WHERE out, condition, x, y
    WHERE = "where"
    # copy (with cast): COPY out, in
    COPY = "copy"
    # reductions: OP_REDUCE out, in, axis=k (axis=None reduces everything)
    ADD_REDUCE = "add.reduce"
    MULTIPLY_REDUCE = "multiply.reduce"
    MAXIMUM_REDUCE = "maximum.reduce"
    MINIMUM_REDUCE = "minimum.reduce"
    LOGICAL_AND_REDUCE = "logical_and.reduce"
    LOGICAL_OR_REDUCE = "logical_or.reduce"
    # arg reductions: ARGMIN_REDUCE out, in, axis=k (np.argmin: the index of the first
    # extreme along axis k, or in the flattened array for axis=None; the first NaN wins;
    # an int64 output)
    ARGMIN_REDUCE = "argmin"
    ARGMAX_REDUCE = "argmax"
    # scans: OP_ACCUMULATE out, in, axis=k
    ADD_ACCUMULATE = "add.accumulate"
    MULTIPLY_ACCUMULATE = "multiply.accumulate"
    MAXIMUM_ACCUMULATE = "maximum.accumulate"
    MINIMUM_ACCUMULATE = "minimum.accumulate"
    LOGICAL_AND_ACCUMULATE = "logical_and.accumulate"
    LOGICAL_OR_ACCUMULATE = "logical_or.accumulate"
    # generators: RANGE out, start=a, step=d (a + d * flat C-order index; a=0, d=1 by
    # default); RANDOM out, seed=s (uniform [0, 1)) or key=k (values recorded at capture)
    RANGE = "range"
    RANDOM = "random"
    # filters: COMPRESS out, data, mask (data[mask], C order: a mask of data's shape selects
    # elements into a 1-D output, a mask of data.shape[:m] selects rows into an output of
    # shape (count,) + data.shape[m:]; count is the count of True in the mask recorded at
    # capture; docs/filters-gathers-histograms.md, "Filters")
    COMPRESS = "compress"
    # indexed reads: GATHER out, src, idx0[, idx1, ...][, axis=a] (NumPy's integer-array indexing:
    # out[p] = src[p's first a coordinates, idx0[p], ..., idx(k-1)[p], p's last ndim(src) - a - k
    # coordinates]; docs/filters-gathers-histograms.md, "Gathers")
    GATHER = "gather"
    # contractions: CONTRACT out, a, b, subscripts="ij,jk->ik" (np.einsum of two operands,
    # explicit output; docs/contractions.md, "Contractions"): ``@``, np.dot, np.matmul, np.einsum
    CONTRACT = "contract"
    # histograms: BINCOUNT out, x[, weights] (np.bincount into the output's length L, recorded
    # at capture: out[k] counts (or sums the weights of) the x equal to k; an x outside [0, L)
    # raises ValueError when it runs; docs/filters-gathers-histograms.md, "Histograms")
    BINCOUNT = "bincount"
    # anything else, run by NumPy and never fused: OPAQUE out, in..., name="..."
    OPAQUE = "opaque"
    # system: DEL frees a base, SYNC hands a base's contents to the user
    DEL = "del"
    SYNC = "sync"

    @property
    def info(self) -> "OpInfo":
        """The opcode's row of :data:`OPCODES`.

        >>> Opcode.ADD_REDUCE.info.partials
        'sum'
        """
        return OPCODES[self]

    @property
    def ufunc(self) -> np.ufunc:
        """The NumPy ufunc behind an element-wise, reduction or scan opcode."""
        return getattr(np, self.value.split(".")[0])

    @property
    def combining(self) -> "Opcode":
        """The reduction with a scan's operator (a scan's running value is that reduction
        of the prefix: same identity, same combine); a reduction is its own.

        >>> Opcode.MAXIMUM_ACCUMULATE.combining
        <Opcode.MAXIMUM_REDUCE: 'maximum.reduce'>
        """
        if not self.name.endswith(("_ACCUMULATE", "_REDUCE")):
            raise ValueError(f"{self.name} is neither a reduction nor a scan")
        return Opcode[self.name.replace("_ACCUMULATE", "_REDUCE")]


#: the finest families, one per row (OpFamily's unions are built from them)
FAMILIES: tuple[str, ...] = ("unary", "binary", "ternary", "copy", "reduction", "scan", "generator", "filter",
                             "gather", "contraction", "opaque", "system", "histogram")


@dataclass(frozen=True)
class OpInfo:
    """What one opcode is: a row of :data:`OPCODES`.

    Examples
    --------
    >>> info = Opcode.MAXIMUM_REDUCE.info
    >>> info.identity_of("float32"), info.identity_of("int8"), info.identity_of("bool")
    (-inf, -128, False)
    >>> info.combine.format(a="acc", b="x[i]"), [name for name, meaning in info.attributes]
    ('np.maximum(acc, x[i])', ['axis'])
    """

    opcode: Opcode
    #: one of :data:`FAMILIES`
    family: str
    #: input operands after the output; ``None`` where the family's own check counts them
    #: (GATHER: a source and 1..ndim index arrays; CONTRACT: two arrays with its
    #: subscripts; BINCOUNT: the values and optional weights; OPAQUE: any; DEL and SYNC: one
    #: array name and nothing else)
    arity: int | None
    #: the keyword operands it accepts, each with its meaning
    attributes: tuple[tuple[str, str], ...] = ()
    #: the NumPy function its values are (a ufunc; ``ufunc.reduce`` of a reduction,
    #: ``ufunc.accumulate`` of a scan; ``np.where``; ``np.copy``); ``None`` where the
    #: reference executor spells its meaning itself (generators, filters, gathers,
    #: contractions, opaque calls, DEL and SYNC)
    numpy: Callable[..., Any] | None = None
    #: the Numba scalar expression of an element-wise opcode, ``{0}``, ``{1}``, ``{2}``
    #: its operands in the loop's dtypes; ``None`` where codegen writes special code
    numba: str | None = None
    #: overrides of ``numba`` by the kind of the loop's first dtype (``"i"``, ``"u"``, ...)
    numba_by_kind: tuple[tuple[str, str], ...] = ()
    #: the helper computing it in a float64 loop, a function the loop vectorises (its source:
    #: :mod:`fusionlab.backend.numba.vmath`), where libm's scalar call would keep the loop scalar
    vector: str | None = None
    #: the Numba functions its expressions call, as (name, source) pairs: a kernel's module
    #: defines, once and before the kernel, each one its expressions call (:meth:`helpers_in`)
    helpers: tuple[tuple[str, str], ...] = ()
    #: a reduction's identity (``-inf``/``inf`` of max/min: the dtype's extreme, see
    #: :meth:`identity_of`)
    identity: bool | int | float | None = None
    #: a reduction's combine of accumulator ``{a}`` and element ``{b}`` in Numba source
    combine: str | None = None
    #: a reduction's NumPy array method combining partial results (``part.sum()``)
    partials: str | None = None
    #: an arg reduction's test that element ``{b}`` takes the place of the running extreme
    #: ``{a}`` (strictly better: the first of equal values stays), by the kind of the
    #: input's dtype (``"f"``: a NaN beats everything but an earlier NaN), ``""`` for the
    #: others; an arg reduction carries (value, index) where the others carry a value
    better: tuple[tuple[str, str], ...] = ()
    #: the time model's operation classes one element pays (:mod:`fusionlab.costs.timemodel`)
    cost: tuple[str, ...] = ("arithmetic",)
    #: other names of it in the text format (``MUL``, ``CUMSUM``)
    aliases: tuple[str, ...] = ()
    #: other names of its ufunc that NumPy hands to ``__array_ufunc__`` (``true_divide``)
    ufunc_names: tuple[str, ...] = ()

    def scalar(self, operands: Sequence[str], dtype: Any = None) -> str:
        """The Numba expression of the element-wise opcode on ``operands`` (source text of
        scalars in the loop's dtypes) when the loop's first dtype is ``dtype`` (None: not
        known, the general expression); ``{bits}`` in a template is that dtype's width.

        >>> Opcode.SIGN.info.scalar(["x"], "uint8"), Opcode.SIGN.info.scalar(["x"], "int8")
        ('x > 0', 'np.sign(x)')
        >>> Opcode.RIGHT_SHIFT.info.scalar(["x", "y"], "int32")
        '(x >> y if 0 <= y < 32 else x >> (32 - 1))'
        """
        template, bits = self.numba, 0
        if dtype is not None:
            dt = np.dtype(dtype)
            template, bits = dict(self.numba_by_kind).get(dt.kind, self.numba), 8 * dt.itemsize
        if template is None:
            raise ValueError(f"{self.opcode.name} has no scalar expression: codegen writes its code")
        return template.format(*operands, bits=bits)

    def helpers_in(self, source: str) -> tuple[str, ...]:
        """The sources of the row's helpers that ``source`` (a kernel's) calls.

        >>> [h.splitlines()[1] for h in Opcode.POWER.info.helpers_in("y = _ipow(a, b, np.int64(1))")]
        ['def _ipow(a, b, one):']
        >>> Opcode.POWER.info.helpers_in("y = a ** b")
        ()
        """
        return tuple(text for name, text in self.helpers if f"{name}(" in source)

    def better_of(self, dtype: Any, a: str, b: str) -> str:
        """An arg reduction's test that element ``b`` replaces the running extreme ``a``
        (Numba source) for an input of ``dtype``.

        >>> Opcode.ARGMIN_REDUCE.info.better_of("int8", "v", "x")
        'x < v'
        >>> Opcode.ARGMAX_REDUCE.info.better_of("float32", "v", "x")
        '(x > v or (x != x and v == v))'
        """
        table = dict(self.better)
        if not table:
            raise ValueError(f"{self.opcode.name} is not an arg reduction")
        return table.get(np.dtype(dtype).kind, table[""]).format(a=a, b=b)

    def identity_of(self, dtype: Any) -> bool | int | float:
        """A reduction's identity in ``dtype``: max and min of integers start at the type's
        lowest and highest values, of bools at False and True (NumPy's orders)."""
        if self.identity is None:
            raise ValueError(f"{self.opcode.name} is not a reduction: no identity")
        kind = np.dtype(dtype).kind
        if isinstance(self.identity, float) and math.isinf(self.identity) and kind in "iub":
            if kind == "b":
                return self.identity > 0
            info = np.iinfo(dtype)
            return int(info.max if self.identity > 0 else info.min)
        return self.identity


# --------------------------------------------------------------------------- the rows

#: NumPy's integer power (``npy_power``: square and multiply in the loop's type, wrapping)
#: for every exponent. Numba's ``**`` of integers switches to ``math.pow`` in floating point
#: above 2**16 (numba/cpython/numbers.py, ``int_power``): ``int8 ** uint32(4294967295)`` gave
#: -2**63 where NumPy gives 0. The products are 64-bit of the loop's kind (``one`` is
#: np.int64(1) or np.uint64(1)): modular arithmetic keeps the low bits, and the store casts
#: to the loop's type. A literal exponent is constant-folded (``x ** 3`` is two multiplies).
#: A negative exponent gives 1: NumPy raises for it at capture, so no kernel sees one.
_IPOW = (
    "@numba.njit(error_model='numpy')\n"
    "def _ipow(a, b, one):\n"
    "    r, x, e = one, one * a, one * b  # 64-bit products: the low bits are the loop type's\n"
    "    while e > 0:\n"
    "        if e & one:\n"
    "            r *= x\n"
    "        x *= x\n"
    "        e >>= one\n"
    "    return r\n"
)

_AXIS = (("axis", "the axis it runs along (an int; None: every element, in C order)"),)
_EXP, _LOG, _DIV, _CMP = ("exp",), ("log",), ("division",), ("comparison",)


def _call(op: Opcode, nin: int) -> str:
    """``np.<ufunc>({0}, ...)``: the element-wise opcode as Numba's NumPy function."""
    return f"np.{op.value}(" + ", ".join(f"{{{k}}}" for k in range(nin)) + ")"


def _unary(op: Opcode, numba: str | None = None, cost: tuple[str, ...] = ("arithmetic",),
           **more: Any) -> OpInfo:
    return OpInfo(op, "unary", 1, numpy=op.ufunc, numba=numba or _call(op, 1), cost=cost, **more)


def _binary(op: Opcode, numba: str | None = None, cost: tuple[str, ...] = ("arithmetic",),
            **more: Any) -> OpInfo:
    return OpInfo(op, "binary", 2, numpy=op.ufunc, numba=numba or _call(op, 2), cost=cost, **more)


def _reduction(op: Opcode, identity: bool | int | float, combine: str, partials: str,
               aliases: tuple[str, ...] = ()) -> OpInfo:
    return OpInfo(op, "reduction", 1, _AXIS, numpy=op.ufunc.reduce, identity=identity, combine=combine,
                  partials=partials, cost=("reduction",), aliases=aliases)


def _arg_reduction(op: Opcode, identity: float, order: str, aliases: tuple[str, ...] = ()) -> OpInfo:
    # the running extreme starts at the dtype's far end (identity_of) with index 0: an
    # element equal to it never replaces it, so the index stays at the first element
    better = (("f", f"({{b}} {order} {{a}} or ({{b}} != {{b}} and {{a}} == {{a}}))"), ("", f"{{b}} {order} {{a}}"))
    return OpInfo(op, "reduction", 1, _AXIS, numpy=getattr(np, op.value), identity=identity, better=better,
                  cost=("reduction", "comparison"), aliases=aliases)


def _scan(op: Opcode, aliases: tuple[str, ...] = ()) -> OpInfo:
    # identity and combine: those of ``op.combining`` (a running reduction of the prefix)
    return OpInfo(op, "scan", 1, _AXIS, numpy=op.ufunc.accumulate, cost=("reduction",), aliases=aliases)


_ROWS: tuple[OpInfo, ...] = (
    _unary(Opcode.ABSOLUTE, aliases=("ABS",), ufunc_names=("abs",)),
    _unary(Opcode.NEGATIVE, "-{0}", aliases=("NEG",)),
    _unary(Opcode.POSITIVE),
    _unary(Opcode.SQRT, cost=("sqrt",)),
    _unary(Opcode.SQUARE),
    _unary(Opcode.EXP, cost=_EXP, vector="_vexp"),
    _unary(Opcode.EXP2, cost=_EXP),
    _unary(Opcode.EXPM1, cost=_EXP),
    _unary(Opcode.LOG, cost=_LOG, vector="_vlog"),
    _unary(Opcode.LOG2, cost=_LOG),
    _unary(Opcode.LOG10, cost=_LOG),
    _unary(Opcode.LOG1P, cost=_LOG),
    _unary(Opcode.SIN, cost=_EXP),   # transcendental calls cost about what exp does
    _unary(Opcode.COS, cost=_EXP),
    _unary(Opcode.TAN, cost=_EXP),
    _unary(Opcode.ARCSIN, cost=_EXP),
    _unary(Opcode.ARCCOS, cost=_EXP),
    _unary(Opcode.ARCTAN, cost=_EXP),
    _unary(Opcode.SINH, cost=_EXP),
    _unary(Opcode.COSH, cost=_EXP),
    _unary(Opcode.TANH, cost=_EXP),
    _unary(Opcode.FLOOR),
    _unary(Opcode.CEIL),
    _unary(Opcode.RINT),
    _unary(Opcode.TRUNC),
    # Numba's np.sign of an unsigned value reads it as signed; of -0.0 it gives -0.0 (NumPy 0.0)
    _unary(Opcode.SIGN, cost=_CMP, numba_by_kind=(("u", "{0} > 0"), ("f", "(np.sign({0}) + 0.0)"))),
    _unary(Opcode.RECIPROCAL, cost=_DIV),
    _unary(Opcode.LOGICAL_NOT, cost=_CMP),
    _unary(Opcode.INVERT),
    _unary(Opcode.ISNAN, cost=_CMP),
    _unary(Opcode.ISINF, cost=_CMP),
    _unary(Opcode.ISFINITE, cost=_CMP),
    _binary(Opcode.ADD, "{0} + {1}"),
    _binary(Opcode.SUBTRACT, "{0} - {1}", aliases=("SUB",)),
    _binary(Opcode.MULTIPLY, "{0} * {1}", aliases=("MUL",)),
    _binary(Opcode.DIVIDE, "{0} / {1}", _DIV, aliases=("DIV", "TRUE_DIVIDE"), ufunc_names=("true_divide",)),
    # Numba's np.floor_divide of floats is floor(a / b) (1 // 0.1 gives 10); its `//` is
    # NumPy's divmod-based quotient (9), signed zeros, inf and nan included. The most
    # negative integer divided by -1 traps (SIGFPE) in compiled code; NumPy wraps the
    # quotient and gives a remainder of 0 (the quotient computed in the loop's type)
    _binary(Opcode.FLOOR_DIVIDE, "{0} // {1}", _DIV,
            numba_by_kind=(("i", "(-{0} if {1} == -1 else {0} // {1})"),)),
    # of floats: Numba's `%` is CPython's, NumPy's divmod remainder (a zero takes the divisor's
    # sign); its np.remainder gives +0.0 for remainder(-3.0, -3.0)
    _binary(Opcode.REMAINDER, None, _DIV, numba_by_kind=(("i", "(0 if {1} == -1 else {0} % {1})"),
                                                          ("f", "{0} % {1}")),
            aliases=("MOD",), ufunc_names=("mod",)),
    # x**y = exp(y log x) for floats; integers by squaring (_IPOW), exact for every exponent
    _binary(Opcode.POWER, "{0} ** {1}", ("exp", "log"), aliases=("POW",),
            numba_by_kind=(("i", "_ipow({0}, {1}, np.int64(1))"), ("u", "_ipow({0}, {1}, np.uint64(1))")),
            helpers=(("_ipow", _IPOW),)),
    _binary(Opcode.MAXIMUM, cost=_CMP, aliases=("MAX",)),
    _binary(Opcode.MINIMUM, cost=_CMP, aliases=("MIN",)),
    _binary(Opcode.FMAX, cost=_CMP),
    _binary(Opcode.FMIN, cost=_CMP),
    _binary(Opcode.ARCTAN2, cost=_EXP),
    _binary(Opcode.HYPOT, cost=("sqrt", "arithmetic")),
    _binary(Opcode.LESS, "{0} < {1}", _CMP),
    _binary(Opcode.LESS_EQUAL, "{0} <= {1}", _CMP),
    _binary(Opcode.GREATER, "{0} > {1}", _CMP),
    _binary(Opcode.GREATER_EQUAL, "{0} >= {1}", _CMP),
    _binary(Opcode.EQUAL, "{0} == {1}", _CMP),
    _binary(Opcode.NOT_EQUAL, "{0} != {1}", _CMP),
    _binary(Opcode.LOGICAL_AND, cost=_CMP),
    _binary(Opcode.LOGICAL_OR, cost=_CMP),
    _binary(Opcode.LOGICAL_XOR, cost=_CMP),
    _binary(Opcode.BITWISE_AND),
    _binary(Opcode.BITWISE_OR),
    _binary(Opcode.BITWISE_XOR),
    # a shift by the width or more (or a negative count) is undefined in compiled code; NumPy
    # gives 0, or -1 for a negative value shifted right (npy_lshift, npy_rshift)
    _binary(Opcode.LEFT_SHIFT, numba_by_kind=(("i", "({0} << {1} if 0 <= {1} < {bits} else {0} ^ {0})"),
                                              ("u", "({0} << {1} if {1} < {bits} else {0} ^ {0})"))),
    _binary(Opcode.RIGHT_SHIFT, numba_by_kind=(("i", "({0} >> {1} if 0 <= {1} < {bits} else {0} >> ({bits} - 1))"),
                                               ("u", "({0} >> {1} if {1} < {bits} else {0} ^ {0})"))),
    OpInfo(Opcode.WHERE, "ternary", 3, numpy=np.where, numba="{1} if {0} else {2}", cost=("where",)),
    OpInfo(Opcode.COPY, "copy", 1, numpy=np.copy, numba="{0}", aliases=("IDENTITY",)),
    _reduction(Opcode.ADD_REDUCE, 0, "{a} + {b}", "sum", ("SUM",)),
    _reduction(Opcode.MULTIPLY_REDUCE, 1, "{a} * {b}", "prod", ("PROD",)),
    _reduction(Opcode.MAXIMUM_REDUCE, -math.inf, "np.maximum({a}, {b})", "max"),
    _reduction(Opcode.MINIMUM_REDUCE, math.inf, "np.minimum({a}, {b})", "min"),
    # ``and``/``or`` would return an operand (a float) where NumPy gives a bool
    _reduction(Opcode.LOGICAL_AND_REDUCE, True, "np.logical_and({a}, {b})", "all"),
    _reduction(Opcode.LOGICAL_OR_REDUCE, False, "np.logical_or({a}, {b})", "any"),
    _arg_reduction(Opcode.ARGMIN_REDUCE, math.inf, "<", ("ARGMIN",)),
    _arg_reduction(Opcode.ARGMAX_REDUCE, -math.inf, ">", ("ARGMAX",)),
    _scan(Opcode.ADD_ACCUMULATE, ("CUMSUM",)),
    _scan(Opcode.MULTIPLY_ACCUMULATE, ("CUMPROD",)),
    _scan(Opcode.MAXIMUM_ACCUMULATE, ("CUMMAX",)),
    _scan(Opcode.MINIMUM_ACCUMULATE, ("CUMMIN",)),
    _scan(Opcode.LOGICAL_AND_ACCUMULATE),
    _scan(Opcode.LOGICAL_OR_ACCUMULATE),
    OpInfo(Opcode.RANGE, "generator", 0, (
        ("start", "the value at flat index 0 (default 0)"),
        ("step", "the difference of successive values in flat C order (default 1)"),
        ("stop", "the last element, exactly (np.linspace's end point)"),
    ), aliases=("ARANGE",)),
    OpInfo(Opcode.RANDOM, "generator", 0, (
        ("seed", "the seed of uniform [0, 1) draws when no values were recorded"),
        ("key", "the values recorded at capture (the capture's externals)"),
        ("name", "the NumPy call that drew them (for listings)"),
    ), cost=_EXP),   # a generator's draw costs about a transcendental call
    OpInfo(Opcode.COMPRESS, "filter", 2),
    OpInfo(Opcode.GATHER, "gather", None, (
        ("axis", "the source's first indexed axis (0 by default; the axes before it are the output's first)"),
    )),
    OpInfo(Opcode.CONTRACT, "contraction", None, (
        ("subscripts", "np.einsum's explicit subscripts of the two operands ('ij,jk->ik')"),
        ("via", "the NumPy function called: matmul, dot, inner, outer or einsum (a lone one replays it)"),
    )),
    # one or two inputs (the values, then the weights): its family's check counts them
    OpInfo(Opcode.BINCOUNT, "histogram", None, numpy=np.bincount, cost=("reduction",)),
    OpInfo(Opcode.OPAQUE, "opaque", None, (
        ("name", "the NumPy function NumPy runs (np.sort, ...)"),
        ("key", "the function recorded at capture (the capture's externals)"),
    )),
    OpInfo(Opcode.DEL, "system", None),
    OpInfo(Opcode.SYNC, "system", None),
)


def _index(rows: Sequence[OpInfo]) -> Mapping[Opcode, OpInfo]:
    """The rows by opcode; every opcode has exactly one, of a known family."""
    table: dict[Opcode, OpInfo] = {}
    for row in rows:
        if row.opcode in table:
            raise AssertionError(f"{row.opcode.name} has two rows")
        if row.family not in FAMILIES:
            raise AssertionError(f"{row.opcode.name}: unknown family {row.family!r}")
        table[row.opcode] = row
    missing = [op.name for op in Opcode if op not in table]
    if missing:
        raise AssertionError(f"no row for {', '.join(missing)}")
    return MappingProxyType(table)


#: Every opcode's facts (read only).
OPCODES: Mapping[Opcode, OpInfo] = _index(_ROWS)


def _family(*names: str) -> frozenset[Opcode]:
    return frozenset(op for op, row in OPCODES.items() if row.family in names)


class OpFamily:
    """Families of opcodes; fusion rules test families, never lists of opcodes."""

    UNARY: frozenset[Opcode] = _family("unary")
    BINARY: frozenset[Opcode] = _family("binary")
    TERNARY: frozenset[Opcode] = _family("ternary")
    COPY: frozenset[Opcode] = _family("copy")
    ELEMENTWISE: frozenset[Opcode] = UNARY | BINARY | TERNARY | COPY
    REDUCTION: frozenset[Opcode] = _family("reduction")
    #: the reductions to an index (np.argmin, np.argmax): they carry (value, index)
    ARG_REDUCTION: frozenset[Opcode] = frozenset(op for op in REDUCTION if OPCODES[op].better)
    SCAN: frozenset[Opcode] = _family("scan")
    GENERATOR: frozenset[Opcode] = _family("generator")
    #: size-changing selections (Robinson et al.'s ``filter``): their output's length
    #: depends on the data
    FILTER: frozenset[Opcode] = _family("filter")
    #: reads at data-dependent positions (integer-array indexing): element-wise in their
    #: indices and output, but their source is read anywhere
    GATHER: frozenset[Opcode] = _family("gather")
    #: sums of products over shared indices (Berényi et al.'s ``rnz`` inside ``map``s)
    CONTRACTION: frozenset[Opcode] = _family("contraction")
    #: counts (or weight sums) of integer values into bins (np.bincount): iterate over their
    #: input like a full reduction, write their output at data-dependent positions
    HISTOGRAM: frozenset[Opcode] = _family("histogram")
    OPAQUE: frozenset[Opcode] = _family("opaque")
    SYSTEM: frozenset[Opcode] = _family("system")
    COMPUTE: frozenset[Opcode] = frozenset(Opcode) - SYSTEM


#: The paper's short names and other common spellings, accepted by the parser.
ALIASES: Mapping[str, Opcode] = MappingProxyType({a: row.opcode for row in _ROWS for a in row.aliases})

# (ufunc name, ufunc method) -> opcode, for capture: what NumPy calls a ufunc and its methods
_BY_UFUNC: Mapping[tuple[str, str], Opcode] = MappingProxyType({
    (name, method): row.opcode
    for row in _ROWS
    for method, family in (("__call__", ("unary", "binary")), ("reduce", ("reduction",)),
                           ("accumulate", ("scan",)))
    if row.family in family and not row.better   # np.argmin is a function, not a ufunc's method
    for name in (row.opcode.value.split(".")[0],) + row.ufunc_names
})


def opcode_of_ufunc(name: str, method: str) -> Opcode | None:
    """The opcode of NumPy's ufunc ``name`` called with ``method`` (``"__call__"``,
    ``"reduce"``, ``"accumulate"``), or ``None`` when no opcode is that call.

    >>> opcode_of_ufunc("add", "reduce"), opcode_of_ufunc("mod", "__call__"), opcode_of_ufunc("add", "at")
    (<Opcode.ADD_REDUCE: 'add.reduce'>, <Opcode.REMAINDER: 'remainder'>, None)
    """
    return _BY_UFUNC.get((name, method))


# --------------------------------------------------------------------------- literal powers

#: literal exponents of a float POWER the kernels compute with ``sqrt``, not a ``pow`` call
HALF_POWERS = frozenset({0.5, -0.5, 1.5, -1.5})
#: the largest integer exponent of a float POWER the kernels compute with products
MOST_PRODUCTS = 8


def power_without_pow(exponent: Any) -> float | None:
    """The literal exponent of a float POWER that the kernels compute without a ``pow``
    call (``power``: square roots for :data:`HALF_POWERS`, repeated squaring for
    an integer value from 2 to :data:`MOST_PRODUCTS`), else ``None``; the time model
    prices the same forms. One decision for both.

    >>> power_without_pow(3), power_without_pow(5.0), power_without_pow(-1.5)
    (3.0, 5.0, -1.5)
    >>> power_without_pow(2.5), power_without_pow(-2.0), power_without_pow(True)
    (None, None, None)
    """
    if isinstance(exponent, (bool, np.bool_)) or not isinstance(exponent, (int, float, np.integer, np.floating)):
        return None
    value = float(exponent)
    if value in HALF_POWERS or (value.is_integer() and 2 <= value <= MOST_PRODUCTS):
        return value
    return None
