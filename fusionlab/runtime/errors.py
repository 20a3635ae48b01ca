"""A first-order forward error model of a captured program: for every value, how far two
correct evaluations of it (NumPy's and fusionlab's kernels) may differ.

The reference executor replays the program with NumPy; beside it a *shadow* pass keeps, for
every element of every base, a bound ``b`` on ``|kernel - numpy|`` computed from the
operands' bounds and the reference values (docs/check.md, "The check's error model"):

- element-wise instructions (every family of :data:`OpFamily.ELEMENTWISE`): the operands'
  bounds are pushed through the function by evaluating it at the corners ``x +- b`` of the
  operands' boxes (``|f'(x)| b`` to first order, exact for functions monotone in each
  operand: sums, products, quotients, ``exp``, ``floor``, comparisons); plus one unit in the
  last place of the result, ``ULPS`` units for the math functions whose implementations
  differ (the time model's ``exp``/``log`` classes), ``NOT_ROUNDED_ULPS`` for complex
  products, quotients and magnitudes (NumPy's scalar math and its loops differ); a bool or
  integer result whose corners
  disagree (a comparison or a cast of a value within its bound of a threshold) gets the
  difference its two possible values make;
- reductions and scans by their combine (the opcode row's ``partials``): a sum adds its
  terms' bounds plus the reordering term ``(n - 1 + ceil(log2 n)) eps sum|x|`` (any order of
  ``n`` terms is within ``(n - 1) u sum|x|`` of the exact sum, NumPy's pairwise one within
  ``ceil(log2 n) u sum|x|``; Higham, Thm 4.1 and eq. 4.6); a product by
  ``prod(|x| + b) - prod|x|`` plus ``n eps |p|``; max/min and the logical ones by the largest
  bound; an arg reduction is at a threshold when another element is within the bounds;
- contractions as sums of products: ``|A| b_B + b_A |B| + b_A b_B`` plus the reordering term
  of their summed extent;
- gathers and filters move their source's bounds with the values; generators and recorded
  random values are exact (``RANGE``: two ulp); opaque NumPy calls scale their inputs'
  largest relative bound, or take twice their largest absolute one (``np.diff``), whichever
  is larger (a heuristic: their condition is unknown).

Examples
--------
>>> from fusionlab import parse
>>> p = parse("ARRAY X float32[1000]\\nARRAY S float32[]\\nRANGE X, step=0.001\\n"
...           "ADD_REDUCE S, X, axis=None\\nSYNC S")
>>> values, bounds = propagate([p])
>>> float(values["S"][()]), bool(0 < bounds["S"][()] < 1e-1)
(499.5, True)
"""

from __future__ import annotations

import itertools
import math
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from fusionlab.ir.bytecode import Instruction, Opcode, OpFamily, Program, View, contraction_letters
from fusionlab.ir.subscripts import numpy_call
from fusionlab.runtime.reference import Externals, Storage, execute_instruction, gather
from fusionlab.runtime.spread import FACTOR, SAMPLES, sampled_spread

__all__ = ["ULPS", "UNKNOWN", "ShadowStorage", "propagate", "allowance", "bound_of", "reorder_factor", "unit"]

#: Units in the last place allowed for every floating value a math function computes: its
#: implementations differ between NumPy's SIMD loops and LLVM's by a few (NumPy documents up
#: to 4 ULP for its AVX-512 ``exp``/``log``; powers and trigonometry a little more). The
#: check (:mod:`fusionlab.runtime.check`) uses the same constant.
ULPS = 16

_MATH = frozenset({"exp", "log"})   # the time model's classes of the library math functions


class ShadowStorage:
    """The bounds of a running program: a float64 array per base, laid out as the base."""

    def __init__(self) -> None:
        self.flat: dict[str, np.ndarray] = {}
        #: bases some of whose bounds no rule could compute (NaN there): what is computed
        #: from them is unknown too
        self.unknown: set[str] = set()

    def view(self, v: View) -> np.ndarray:
        flat = self.flat.get(v.base.name)
        if flat is None:
            flat = self.flat[v.base.name] = np.zeros(max(v.base.size, 1))
        return np.ndarray(v.shape, np.float64, flat, v.offset * 8, tuple(s * 8 for s in v.strides))

    def release(self, name: str) -> None:
        self.flat.pop(name, None)
        self.unknown.discard(name)

    def array(self, v: View) -> np.ndarray:
        return self.flat.get(v.base.name, np.zeros(max(v.base.size, 1)))[: v.base.size].reshape(v.base.shape).copy()


def unit(dtypes: Sequence[Any]) -> float:
    """The coarsest machine epsilon among the floating ``dtypes`` (0 when none is floating:
    integer arithmetic is exact in any order).

    >>> unit(["float32", "float64"]) == float(np.finfo(np.float32).eps), unit(["int64"])
    (True, 0.0)
    """
    eps = [float(np.finfo(d).eps) for d in map(np.dtype, dtypes) if d.kind in "fc"]
    return max(eps, default=0.0)


def reorder_factor(n: int) -> float:
    """The factor of ``eps * sum|x|`` two orders of an ``n``-term sum may differ by:
    ``n - 1`` for any order (the kernels' serial, SIMD-lane and per-thread partials),
    ``ceil(log2 n)`` for NumPy's pairwise sum.

    >>> reorder_factor(1), reorder_factor(1000)
    (0.0, 1009.0)
    """
    n = max(int(n), 1)
    return float(n - 1 + (math.ceil(math.log2(n)) if n > 1 else 0))


def _as_float(x: Any) -> np.ndarray:
    a = np.asarray(x)
    return a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)


def _dtypes(ins: Instruction) -> list[np.dtype]:
    return [np.dtype(ins.outputs[0].dtype)] + [np.dtype(x.dtype) for x in ins.inputs if isinstance(x, View)]


def _cast(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """A result as the output's dtype holds it, in float64 to subtract (bools and integers
    exactly as stored: a cast to an integer truncates)."""
    if x.dtype.kind == "c" and dtype.kind != "c":
        x = x.real
    if x.dtype.kind in "biu":   # exactly as stored; a complex output stays complex (no ComplexWarning)
        stored = x.astype(dtype)
        return stored if stored.dtype.kind == "c" else stored.astype(np.float64)
    if dtype.kind in "biu":
        finite = np.where(np.isfinite(x), x, 0.0) if x.dtype.kind == "f" else x.real
        return finite.astype(dtype).astype(np.float64)
    return x


def _function(ins: Instruction) -> Callable[..., Any]:
    op = ins.opcode
    if op is Opcode.COPY:
        return lambda x: x
    if op is Opcode.WHERE:
        return lambda c, x, y: np.where(c != 0, x, y)
    return op.info.numpy


def _shifted(x: np.ndarray, b: np.ndarray, signs: Sequence[complex]) -> list[np.ndarray]:
    """``x`` moved by its bound in each direction of ``signs``."""
    if x.dtype.kind in "biu":   # an integer operand with a bound: whole steps of it
        step = np.ceil(b).astype(np.int64)
        return [x.astype(np.int64) + int(sign.real) * step for sign in signs]
    # plus one float64 unit of the value: an operand with a bound differs in its last bit
    # at least, and a float64 ``x + b`` below half its spacing would round back to x
    step = np.abs(x)
    step *= _EPS64
    step += b
    return [x + step if sign == 1 else x - step if sign == -1 else x + sign * step for sign in signs]


_EPS64 = float(np.finfo(np.float64).eps)


def _operands(vals: Sequence[Any]) -> list[np.ndarray]:
    """Floating operands in float64 (complex128): the corners are computed beyond the
    operands' own precision; bools and integers as they are (bitwise and shift opcodes
    take nothing else)."""
    # a literal stays a Python scalar: NumPy 2 gives it the array's type (NEP 50)
    return [v if not isinstance(v, np.ndarray) else v if v.dtype.kind in "biu" else _as_float(v) for v in vals]


#: Units in the last place (of ``|result|``) allowed complex products, quotients and
#: magnitudes, and ``hypot``: none is correctly rounded, and NumPy's scalar math (what a
#: capture's user gets for ``abs(s)`` of the NumPy scalar a reduction returns), its ufunc
#: loops and LLVM's differ. Measured on 20,000 random complex64 values: ``abs`` of a scalar
#: against the loop up to 1.26 eps|z|, products 1.01; each side within about 1.3 of the
#: exact value, so 4 covers both. Correctly rounded operations (+ - * / sqrt of reals,
#: casts) keep 1.
NOT_ROUNDED_ULPS = 4
_NOT_ROUNDED = frozenset({Opcode.MULTIPLY, Opcode.DIVIDE, Opcode.ABSOLUTE, Opcode.HYPOT})


def _ulps(ins: Instruction, out: np.dtype) -> int:
    """Units in the last place an element-wise instruction's result may differ by between
    two correct evaluations of it with equal operands."""
    if out.kind not in "fc":
        return 0
    if _MATH & set(ins.opcode.info.cost):
        return ULPS
    if ins.opcode in _NOT_ROUNDED and (ins.opcode is Opcode.HYPOT or any(
            isinstance(x, View) and np.dtype(x.dtype).kind == "c" for x in ins.inputs)):
        return NOT_ROUNDED_ULPS
    return 1


def elementwise(ins: Instruction, vals: Sequence[Any], bnds: Sequence[np.ndarray]) -> np.ndarray:
    """The bound of an element-wise instruction's result: the corners of its operands'
    boxes through the function, plus the result's own rounding."""
    out = np.dtype(ins.outputs[0].dtype)
    moved = [i for i, b in enumerate(bnds) if np.any(b > 0)]
    # one ulp even for equal operands: kernels compiled with fastmath 'reassoc' may regroup a
    # chain (x * y * y as x * (y * y): 8 of 5,000 values 1 ulp from NumPy's, found by
    # test_masked_assignment's random cells)
    ulps = _ulps(ins, out)
    if not moved and not ulps:   # equal operands, a correctly rounded (or exact) result: equal
        return np.zeros(())
    f, xs = _function(ins), _operands(vals)
    base = _cast(np.asarray(f(*xs)), out)
    bound = np.zeros(np.shape(base))
    signs = [(1, -1, 1j, -1j) if xs[i].dtype.kind == "c" else (1, -1) for i in moved]
    moves = {i: dict(zip(sg, _shifted(xs[i], np.asarray(bnds[i]), sg))) for i, sg in zip(moved, signs)}
    for corner in itertools.product(*signs):
        args = list(xs)
        for i, sign in zip(moved, corner):
            args[i] = moves[i][sign]
        try:
            diff = np.abs(_cast(np.asarray(f(*args)), out) - base)
        except TypeError:   # a bitwise opcode of a bool operand at a threshold: either value
            diff = np.full(base.shape, np.inf)
        if np.isnan(diff).any():   # a corner outside the function's domain: nothing is known
            diff = np.where(np.isnan(diff), np.inf, diff)
        np.fmax(bound, diff, out=bound)
    if out.kind in "fc":
        # an operand known to nothing: so is the result (the corners of an infinite box
        # would give a bounded quotient c / (sd +- inf) = 0, not "anything")
        for i in moved:
            if np.isinf(bnds[i]).any():
                bound = np.where(np.broadcast_to(np.isinf(bnds[i]), bound.shape), np.inf, bound)
    if ulps:
        # equal operands give equal correctly rounded results (IEEE: + - * / sqrt, casts);
        # operands that differ round to results one more unit apart; the math library's
        # functions differ by ULPS whatever their operands
        mag = np.abs(base)
        if not np.isfinite(mag).all():
            mag = np.where(np.isfinite(mag), mag, 0.0)
        bound = bound + ulps * unit(_dtypes(ins)) * mag
    return bound


def _moved(x: np.ndarray, axis: Any) -> tuple[np.ndarray, int]:
    """``x`` with the reduced axis last (flattened for ``axis=None``), and its length."""
    if axis is None or x.ndim == 0:
        flat = x.reshape(-1)
        return flat, flat.size
    return np.moveaxis(x, axis % x.ndim, -1), x.shape[axis % x.ndim]


def reduction(ins: Instruction, vals: Sequence[Any], bnds: Sequence[np.ndarray]) -> np.ndarray:
    """The bound of a reduction's result, by its combine (the row's ``partials``)."""
    x, n = _moved(_as_float(vals[0]), ins.attr("axis"))
    b, _ = _moved(np.asarray(bnds[0]), ins.attr("axis"))
    # the sum runs in the result's type (``x.mean(dtype=np.float64)`` of float32 values)
    u, kind = unit([ins.outputs[0].dtype]), ins.opcode.info.partials
    mag = np.where(np.isfinite(x), np.abs(x), 0.0)
    if ins.opcode in OpFamily.ARG_REDUCTION:
        return _arg_bound(x, b, ins.opcode is Opcode.ARGMAX_REDUCE, n)
    if kind == "sum":
        return b.sum(-1) + reorder_factor(n) * u * mag.sum(-1)
    if kind == "prod":
        p = np.prod(mag, -1)
        return np.abs(np.prod(mag + b, -1) - p) + (n + 1) * u * p
    return b.max(-1, initial=0.0)   # max, min, all, any: an extreme moves by its bound at most


def _arg_bound(x: np.ndarray, b: np.ndarray, biggest: bool, n: int) -> np.ndarray:
    """An index is at a threshold (any index: bound ``n``) where another element's box
    reaches the extreme's."""
    if not np.any(b > 0) or x.shape[-1] == 0:
        return np.zeros(x.shape[:-1])
    s = x.real if biggest else -x.real
    top = np.nanmax(s, -1, keepdims=True) if np.isfinite(s).any() else s[..., :1]
    reach = np.take_along_axis(b, np.nanargmax(np.where(np.isnan(s), -np.inf, s), -1)[..., None], -1)
    close = (s + b >= top - reach).sum(-1)
    return np.where(close > 1, float(n), 0.0)


def scan(ins: Instruction, vals: Sequence[Any], bnds: Sequence[np.ndarray]) -> np.ndarray:
    """The bound of a scan: at each position, its combine's reduction bound of the prefix."""
    axis = ins.attr("axis")
    x = _as_float(vals[0]).reshape(-1) if axis is None else _as_float(vals[0])
    b = np.asarray(bnds[0]).reshape(-1) if axis is None else np.asarray(bnds[0])
    ax = 0 if axis is None else axis % max(x.ndim, 1)
    u, kind = unit([ins.outputs[0].dtype]), ins.opcode.combining.info.partials
    mag = np.where(np.isfinite(x), np.abs(x), 0.0)
    k = np.arange(1, x.shape[ax] + 1).reshape((-1,) + (1,) * (x.ndim - 1 - ax)) if x.ndim else np.ones(())
    if kind == "sum":
        factor = k - 1 + np.ceil(np.log2(k))   # reorder_factor of each prefix's length
        return np.cumsum(b, ax) + factor * u * np.cumsum(mag, ax)
    if kind == "prod":
        p = np.cumprod(mag, ax)
        return np.abs(np.cumprod(mag + b, ax) - p) + (k + 1) * u * p
    return np.maximum.accumulate(b, ax)


def contraction(ins: Instruction, vals: Sequence[Any], bnds: Sequence[np.ndarray]) -> np.ndarray:
    """A contraction is a sum of products: the products' bounds summed as its terms, plus
    the reordering term of its summed extent."""
    s = ins.attr("subscripts")
    ein = numpy_call("einsum", s)
    a, c = (np.abs(_as_float(v)) for v in vals)
    ba, bc = (np.asarray(b) for b in bnds)
    sa, sb, so = contraction_letters(s)
    extent = dict(zip(sa + sb, ins.views_in[0].shape + ins.views_in[1].shape))
    n = math.prod(m for letter, m in extent.items() if letter not in so)
    bound = reorder_factor(n) * unit([ins.outputs[0].dtype]) * ein(a, c)
    if np.any(ba > 0) or np.any(bc > 0):
        bound = bound + ein(a, bc) + ein(ba, c) + ein(ba, bc)
    return np.asarray(bound)


def moving(ins: Instruction, vals: Sequence[Any], bnds: Sequence[np.ndarray]) -> np.ndarray:
    """Gathers and filters move their source's bounds with its values; an index or a mask
    at a threshold could pick anything (an infinite bound there)."""
    src = np.asarray(bnds[0])
    if ins.opcode in OpFamily.FILTER:
        mask = np.asarray(vals[1]).astype(bool)
        got = src[mask]
        return got if not np.any(np.asarray(bnds[1]) > 0) else np.full(got.shape, np.inf)
    shape = ins.outputs[0].shape
    got = gather(src, [np.asarray(v) for v in vals[1:]], shape, ins.attr("axis", 0))
    unsure = np.zeros(shape, bool)
    for b in bnds[1:]:
        unsure |= np.broadcast_to(np.asarray(b) > 0, shape)
    return np.where(unsure, np.inf, got)


def histogram(ins: Instruction, vals: Sequence[Any], bnds: Sequence[np.ndarray]) -> np.ndarray:
    """Weighted bins add their weights' bounds; a value at a bin's threshold may land in
    another bin (infinite bounds: the bins are not comparable element by element)."""
    length = ins.outputs[0].size
    if np.any(np.asarray(bnds[0]) > 0):
        return np.full(length, np.inf)
    if len(vals) < 2:
        return np.zeros(length)
    w = np.abs(_as_float(vals[1]))
    return (np.bincount(np.asarray(vals[0]).reshape(-1), np.asarray(bnds[1]).reshape(-1), minlength=length)
            + reorder_factor(w.size) * unit(_dtypes(ins)) * np.bincount(np.asarray(vals[0]).reshape(-1),
                                                                        w.reshape(-1), minlength=length))


def generator(ins: Instruction, out: np.ndarray) -> np.ndarray:
    """RANGE: ``start + i * step`` rounds twice (NumPy's ``linspace`` computes it otherwise);
    recorded random values are exact."""
    if ins.opcode is Opcode.RANDOM:
        return np.zeros(out.shape)
    return 2 * unit(_dtypes(ins)) * np.abs(_as_float(out))


def opaque(ins: Instruction, vals: Sequence[Any], bnds: Sequence[np.ndarray], out: np.ndarray) -> np.ndarray:
    """An opaque NumPy call's result: its inputs' largest relative bound scaled to the
    result, or twice their largest absolute bound, whichever is larger (its condition number
    is unknown: a heuristic, see docs/check.md). The absolute term covers calls that
    combine neighbours linearly: ``np.diff(np.log(p))`` is a difference of values near 4.6
    whose result is near 0.01, and a 1-ULP difference in one logarithm is 8.9e-16 of it,
    which the relative scaling alone bounded by 2.3e-16."""
    rel, absolute = 0.0, 0.0
    for v, b in zip(vals, bnds):
        b = np.asarray(b)
        if b.size and np.any(b > 0):
            top = float(np.max(np.abs(_as_float(v)))) if np.size(v) else 0.0
            rel = max(rel, float(np.max(b)) / top if top > 0 else math.inf)
            absolute = max(absolute, float(np.max(b)))
    mag = np.where(np.isfinite(_as_float(out)), np.abs(_as_float(out)), 0.0)
    scale = float(mag.max()) if mag.size else 0.0
    return np.full(np.shape(out), max(rel * scale, 2 * absolute)) + ULPS * unit(_dtypes(ins)) * mag


def bound_of(ins: Instruction, vals: Sequence[Any], bnds: Sequence[np.ndarray]) -> np.ndarray | None:
    """The bound of ``ins``'s result from its operands' values and bounds (None: computed
    after the instruction ran, from its result: generators and opaque calls)."""
    op = ins.opcode
    if op in OpFamily.ELEMENTWISE:
        return elementwise(ins, vals, bnds)
    if op in OpFamily.REDUCTION:
        return reduction(ins, vals, bnds)
    if op in OpFamily.SCAN:
        return scan(ins, vals, bnds)
    if op in OpFamily.CONTRACTION:
        return contraction(ins, vals, bnds)
    if op in OpFamily.GATHER | OpFamily.FILTER:
        return moving(ins, vals, bnds)
    if op in OpFamily.HISTOGRAM:
        return histogram(ins, vals, bnds)
    return None


def _step(ins: Instruction, storage: Storage, shadow: ShadowStorage, externals: Externals,
          synced: dict[str, np.ndarray], bounds: dict[str, np.ndarray]) -> None:
    op = ins.opcode
    if op is Opcode.DEL:
        shadow.release(ins.outputs[0].base.name)
    elif op is Opcode.SYNC:
        bounds[ins.views_in[0].base.name] = shadow.array(ins.views_in[0])
    if op in OpFamily.SYSTEM:
        execute_instruction(ins, storage, externals, synced)
        return
    vals = [storage.view(x) if isinstance(x, View) else x.value for x in ins.inputs]
    bnds = [shadow.view(x) if isinstance(x, View) else np.zeros(()) for x in ins.inputs]
    with np.errstate(all="ignore"):
        bound = _guarded(ins, vals, bnds)
        execute_instruction(ins, storage, externals, synced)
        out = storage.view(ins.outputs[0])
        if bound is None:
            bound = generator(ins, out) if op in OpFamily.GENERATOR else opaque(ins, vals, bnds, out)
    known = np.asarray(bound, dtype=np.float64)
    unknown = bound is UNKNOWN or any(x.base.name in shadow.unknown for x in ins.inputs if isinstance(x, View))
    if unknown:
        shadow.unknown.add(ins.outputs[0].base.name)
        known = np.full(np.shape(known), np.nan)
    elif np.isnan(known).any():   # inf - inf in a rule: the bound is infinite
        known = np.where(np.isnan(known), np.inf, known)
    target = shadow.view(ins.outputs[0])
    if target.size:
        target[...] = known


def allowance(ins: Instruction, vals: Sequence[Any], out: np.ndarray | None) -> np.ndarray | float | None:
    """``ins``'s own rounding allowance: its bound with exact operands (the units in the last
    place of its result, a reduction's reordering term), from the operands' values before it
    runs (``out`` None; None for calls known only after: generators and opaque calls) or
    from its result ``out`` after.

    >>> from fusionlab import parse
    >>> p = parse("ARRAY X float64[3]\\nARRAY Y float64[3]\\nEXP Y, X")
    >>> float(np.max(allowance(p[0], [np.ones(3)], None))) == ULPS * unit(["float64"]) * np.e
    True
    """
    exact = [np.zeros(()) for _ in ins.inputs]
    if out is None:
        return _guarded(ins, vals, exact)
    if ins.opcode in OpFamily.GENERATOR:
        return generator(ins, out)
    return opaque(ins, vals, exact, out)


#: A bound nobody knows: NaN, carried to every value computed from it; the check holds such
#: values to its per-array tolerance instead (:func:`fusionlab.runtime.check.check_namespace`).
UNKNOWN = float("nan")


def _guarded(ins: Instruction, vals: Sequence[Any], bnds: Sequence[np.ndarray]) -> np.ndarray | float | None:
    """:func:`bound_of`, or :data:`UNKNOWN` where a rule cannot evaluate the operands (an
    operand combination no rule foresaw must not stop the replay the check compares with)."""
    try:
        return bound_of(ins, vals, bnds)
    except (TypeError, ValueError, IndexError, OverflowError, ZeroDivisionError, FloatingPointError):
        return UNKNOWN


def propagate(batches: Sequence[Program], externals: Externals | None = None,
              inputs: Mapping[str, np.ndarray] | None = None,
              samples: int | None = None) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Replay ``batches`` in program order with NumPy and beside it the bounds: returns each
    synced base's values (what :func:`~fusionlab.runtime.reference.run_reference` returns)
    and its bounds (float64 arrays of the base's shape), by base name, at its last SYNC.

    Where a floating value's bound is infinite (the model gave up), ``samples`` perturbed
    replays give one instead (:mod:`fusionlab.runtime.spread`; ``None``: its default
    number, 0: none, the infinite bounds stay)."""
    storage, shadow = Storage(dict(inputs or {})), ShadowStorage()
    externals = externals or Externals()
    synced: dict[str, np.ndarray] = {}
    bounds: dict[str, np.ndarray] = {}
    for batch in batches:
        for ins in batch:
            _step(ins, storage, shadow, externals, synced, bounds)
    lost = {n for n, b in bounds.items()
            if n in synced and np.asarray(synced[n]).dtype.kind in "fc" and np.isinf(b).any()}
    if lost and (SAMPLES if samples is None else samples) > 0:
        spread = sampled_spread(batches, externals, dict(inputs or {}), synced, lost, allowance,
                                SAMPLES if samples is None else samples)
        for n, s in spread.items():
            if s > 0:
                bounds[n] = np.where(np.isinf(bounds[n]), FACTOR * s, bounds[n])
    return synced, bounds
