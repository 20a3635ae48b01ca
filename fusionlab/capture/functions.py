"""NumPy functions under capture: ``__array_function__`` dispatch, and the ``numpy`` proxy
module that user code imports (creation functions, ``np.random`` and
``np.lib.stride_tricks`` need it: they take no array argument for NumPy's protocols to see,
or do not dispatch)."""

from __future__ import annotations

import functools
import types
from typing import Any, Callable

import numpy as np

from fusionlab.ir.bytecode import HISTOGRAM_VALUES, Instruction, Literal, Opcode
from fusionlab.capture.contract import contraction
from fusionlab.capture.array import (
    Traced, arg_reduction, array_copy, compress, emit_split, gather, opaque, operand, plain_call,
    reload_all, as_view, lift, recordable, traceable, unwrap,
)
from fusionlab.capture.recorder import NoticeKind, Recorder


def _keepdims(result: Any, a: Any, axis: Any, keepdims: bool) -> Any:
    """A reduction's result with the reduced axes kept as length 1 (a view of it)."""
    if not keepdims or not isinstance(result, Traced):
        return result
    axes = range(a.ndim) if axis is None else [int(x) % a.ndim for x in axis] if isinstance(axis, tuple) \
        else [int(axis) % a.ndim]
    shape = tuple(1 if i in axes else n for i, n in enumerate(a.shape))
    return result.reshape(shape)


def _reduce(ufunc: np.ufunc, a: Any, axis: Any, like: Callable[..., Any], keepdims: bool) -> Any:
    """A reduction recorded as cast-if-needed then ``ufunc.reduce``; the dtype follows
    what ``like`` (np.sum, np.prod, ...) gives for ``a``'s dtype."""
    dtype = like(np.zeros(1, dtype=a.dtype)).dtype
    if isinstance(axis, tuple):
        got = _over_axes(ufunc, a, axis, dtype if dtype != a.dtype else None)
        return None if got is None else _keepdims(got, a, axis, keepdims)
    got = ufunc.reduce(a, axis=axis, dtype=dtype if dtype != a.dtype else None)
    return _keepdims(got, a, axis, keepdims)


def _over_axes(ufunc: np.ufunc, a: Any, axes: tuple[Any, ...], dtype: Any = None) -> Any:
    """``ufunc.reduce`` of ``a`` over several ``axes`` (``np.sum(x, axis=(1, 2, 3))``, a
    convolution's window) as one reduction per axis, the last first so the others keep
    their numbers; ``None`` where NumPy alone should answer (an axis repeated or out of
    range: NumPy's own error). All the axes are the whole array (``axis=None``). A sum or
    a product over several axes groups its terms otherwise than NumPy's one call, so the
    user gets NumPy's own result, computed beside the recorded steps, while the kernels
    compute the steps (a reordering the check's error model bounds).

    >>> from fusionlab.capture import capture
    >>> c = capture("import numpy as np\\nx = np.arange(24.0).reshape(2, 3, 4)\\ns = x.sum(axis=(0, 2))\\n"
    ...             "m = np.max(x, axis=(1, -1), keepdims=True)\\n")
    >>> [i.opcode.name for i in c.program if i.opcode.name.endswith("REDUCE")]
    ['ADD_REDUCE', 'ADD_REDUCE', 'MAXIMUM_REDUCE', 'MAXIMUM_REDUCE']
    >>> c.namespace["s"].tolist(), c.namespace["m"].shape
    ([60.0, 92.0, 124.0], (2, 1, 1))
    """
    if not isinstance(a, Traced) or not all(isinstance(x, (int, np.integer)) and not isinstance(x, bool)
                                            for x in axes):
        return None
    if any(not -a.ndim <= int(x) < a.ndim for x in axes):
        return None
    norm = sorted({int(x) % a.ndim for x in axes}, reverse=True)
    if len(norm) != len(axes):
        return None
    if len(norm) == a.ndim:
        return ufunc.reduce(a, axis=None, dtype=dtype)
    want = ufunc.reduce(a._real, axis=tuple(norm), dtype=dtype)
    got = a
    for k, ax in enumerate(norm):
        got = ufunc.reduce(got, axis=ax, dtype=dtype if k == 0 else None)
    if isinstance(got, Traced) and isinstance(got._r, np.ndarray) and got._r.shape == np.shape(want) \
            and got._r.dtype == np.asarray(want).dtype and got._r.flags.writeable:
        got._r[...] = want   # a fresh array of the last step: the user holds NumPy's own bits
    return got


def _sum(rec: Recorder, a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False, **kw: Any) -> Any:
    if out is not None or kw or dtype is not None:
        return None
    return _reduce(np.add, a, axis, np.sum, keepdims)


def _prod(rec: Recorder, a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False, **kw: Any) -> Any:
    if out is not None or kw or dtype is not None:
        return None
    return _reduce(np.multiply, a, axis, np.prod, keepdims)


def _extreme(ufunc: np.ufunc) -> Callable[..., Any]:
    def f(rec: Recorder, a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, **kw: Any) -> Any:
        if out is not None or kw or a.size == 0:
            return None
        if isinstance(axis, tuple):
            got = _over_axes(ufunc, a, axis)
            return None if got is None else _keepdims(got, a, axis, keepdims)
        return _keepdims(ufunc.reduce(a, axis=axis), a, axis, keepdims)

    return f


def _arg(opcode: Opcode) -> Callable[..., Any]:
    """``np.argmin``/``np.argmax`` (and the methods) as an arg reduction; ``out=`` to NumPy."""
    def f(rec: Recorder, a: Any, axis: Any = None, out: Any = None, *, keepdims: Any = False, **kw: Any) -> Any:
        if out is not None or kw or not isinstance(a, Traced) or not isinstance(keepdims, (bool, np.bool_)):
            return None
        got = arg_reduction(rec, opcode, a, axis)
        return None if got is None else _keepdims(got, a, axis, bool(keepdims))

    return f


def _logical(ufunc: np.ufunc) -> Callable[..., Any]:
    def f(rec: Recorder, a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, **kw: Any) -> Any:
        if out is not None or kw or isinstance(axis, tuple):
            return None
        src = a if a.dtype == bool else a.astype(bool)
        return _keepdims(ufunc.reduce(src, axis=axis), a, axis, keepdims)

    return f


def _mean(rec: Recorder, a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False, **kw: Any) -> Any:
    if out is not None or kw or dtype is not None or isinstance(axis, tuple) or a.size == 0 or \
            a.dtype.kind in "fc" and a.dtype.itemsize < 4:  # float16: NumPy sums in float32
        return None
    count = a.size if axis is None else a.shape[axis]
    src = a if a.dtype.kind in "fc" else a.astype(np.float64)
    return _keepdims(np.true_divide(np.add.reduce(src, axis=axis), count), a, axis, keepdims)


def _var(rec: Recorder, a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0,
         keepdims: bool = False, **kw: Any) -> Any:
    """``np.var`` as NumPy computes it (``numpy/_core/_methods.py``): the mean kept as a
    broadcastable array, the squared deviations, their sum over ``count - ddof``: the same
    operations, so the same bits. float32 and float64 only: NumPy sums integers in float64
    through a cast buffer, whose pairwise blocks a cast array would not reproduce."""
    if out is not None or kw or dtype is not None or isinstance(axis, tuple) or a.size == 0 or \
            a.dtype not in (np.float32, np.float64) or not isinstance(ddof, (int, np.integer)):
        return None
    count = a.size if axis is None else a.shape[int(axis) % a.ndim]
    src = a
    mean = np.true_divide(_keepdims(np.add.reduce(src, axis=axis), src, axis, True), count)
    deviation = src - mean
    squares = deviation * deviation
    return _keepdims(np.true_divide(np.add.reduce(squares, axis=axis), max(count - int(ddof), 0)), a, axis, keepdims)


def _std(rec: Recorder, a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0,
         keepdims: bool = False, **kw: Any) -> Any:
    """``np.std``: the square root of :func:`_var`.

    >>> from fusionlab.capture import capture
    >>> c = capture("import numpy as np\\nx = np.arange(6.0).reshape(2, 3)\\ns = x.std(axis=1, ddof=1)\\n")
    >>> [i.opcode.name for i in c.program if i.opcode.name not in ("DEL", "SYNC", "RANGE")]
    ['ADD_REDUCE', 'DIVIDE', 'SUBTRACT', 'MULTIPLY', 'ADD_REDUCE', 'DIVIDE', 'SQRT']
    >>> c.namespace["s"].tolist()
    [1.0, 1.0]
    """
    got = _var(rec, a, axis, dtype, out, ddof, keepdims, **kw)
    return None if got is None else np.sqrt(got)


def _scan(ufunc: np.ufunc) -> Callable[..., Any]:
    def f(rec: Recorder, a: Any, axis: Any = None, dtype: Any = None, out: Any = None, **kw: Any) -> Any:
        if out is not None or kw or dtype is not None:
            return None
        like = np.cumsum if ufunc is np.add else np.cumprod
        want = like(np.zeros(1, dtype=a.dtype)).dtype
        src = a if want == a.dtype else a.astype(want)
        if axis is None:
            src = src.ravel()
            axis = 0
        return ufunc.accumulate(src, axis=axis)

    return f


def _where(rec: Recorder, cond: Any, x: Any = None, y: Any = None) -> Any:
    if x is None or y is None:
        return None
    ops = [lift(rec, v) for v in (cond, x, y)]
    operands = tuple(operand(v) for v in ops)
    real = np.where(*unwrap(ops))
    shapes = [np.shape(unwrap(v)) for v in ops]
    if any(len(s) > real.ndim for s in shapes) or not traceable(real):
        return None
    out = Traced.fresh(rec, real)
    emit_split(rec, Instruction(Opcode.WHERE, (out._v,), operands))
    return out


def _extract(rec: Recorder, condition: Any, arr: Any) -> Any:
    """``np.extract``: the elements of ``arr`` (flattened) where ``condition`` (flattened,
    of the same size) is nonzero, as COMPRESS after a cast to bool when needed."""
    a, cond = lift(rec, np.asarray(arr) if isinstance(arr, list) else arr), \
        lift(rec, np.asarray(condition) if isinstance(condition, list) else condition)
    if not isinstance(a, Traced) or not isinstance(cond, Traced) or cond.size != a.size or a.size == 0:
        return None
    flat, mask = a.ravel(), cond.ravel()
    if mask.dtype != bool:
        mask = mask.astype(bool)
    return compress(rec, flat, mask)


def _compress(rec: Recorder, condition: Any, a: Any, axis: Any = None, out: Any = None) -> Any:
    """``np.compress`` without an axis and with a condition for every element: ``np.extract``."""
    if axis is not None or out is not None or np.ndim(unwrap(condition)) != 1:
        return None
    return _extract(rec, condition, a)


def _take(rec: Recorder, a: Any, indices: Any, axis: Any = None, out: Any = None, mode: str = "raise") -> Any:
    """``np.take`` as GATHER: without an axis (the flattened array) or along any one (a
    C-contiguous result, as NumPy's), with integer index arrays and NumPy's default
    ``mode="raise"`` (``"wrap"``/``"clip"`` run as NumPy)."""
    a = lift(rec, np.asarray(a) if isinstance(a, list) else a)
    if out is not None or mode != "raise" or not isinstance(a, Traced) or a.ndim == 0:
        return None
    if axis is None:
        return gather(rec, a if a.ndim == 1 else a.ravel(), (indices,))
    if isinstance(axis, (int, np.integer)) and not isinstance(axis, bool) and -a.ndim <= axis < a.ndim:
        return gather(rec, a, (slice(None),) * int(axis % a.ndim) + (indices,), c_order=True)
    return None


def _bincount(rec: Recorder, x: Any, weights: Any = None, minlength: Any = 0) -> Any:
    """``np.bincount`` as BINCOUNT into the bins NumPy gives now (``max(x.max() + 1,
    minlength)``, recorded as the output's length: a later run whose values leave them
    raises ValueError). Values NumPy refuses (negative, a uint64 past intp, not integers),
    weights of another length or not real, a bad ``minlength``, zero bins: ``None`` (NumPy
    runs it, and raises where it does).

    >>> from fusionlab.capture import capture
    >>> c = capture("import numpy as np\\nx = (np.arange(6) % 4).astype(np.int32)\\nh = np.bincount(x, minlength=5)\\n")
    >>> [ins.opcode.name for ins in c.program if ins.opcode.name not in ("DEL", "SYNC")][-1]
    'BINCOUNT'
    >>> c.namespace["h"].tolist()
    [2, 2, 1, 1, 0]
    """
    x = lift(rec, np.asarray(x) if isinstance(x, list) else x)
    if not isinstance(x, Traced) or x.ndim != 1 or x.dtype.name not in HISTOGRAM_VALUES or \
            not isinstance(minlength, (int, np.integer)) or isinstance(minlength, bool) or minlength < 0:
        return None
    values = x._real
    if values.size and values.min() < 0:
        return None
    ins: tuple[Any, ...] = (x._v,)
    if weights is not None:
        w = lift(rec, np.asarray(weights) if isinstance(weights, list) else weights)
        if not isinstance(w, Traced) or w.shape != x.shape or w.dtype.kind not in "biuf":
            return None
        ins += (w._v,)
        real = np.bincount(values, unwrap(w), minlength=int(minlength))
    else:
        real = np.bincount(values, minlength=int(minlength))
    if real.size == 0 or not traceable(real):
        return None
    out = Traced.fresh(rec, real)
    rec.emit(Instruction(Opcode.BINCOUNT, (out._v,), ins))
    return out


def _copy(rec: Recorder, a: Any, order: str = "K", subok: bool = False) -> Any:
    return a.copy() if isinstance(a, Traced) else None


def _like(fill: Any) -> Callable[..., Any]:
    def f(rec: Recorder, a: Any, *args: Any, dtype: Any = None, **kw: Any) -> Any:
        if kw:
            return None
        value = args[0] if fill == "full" and args else fill
        if fill == "full" and not args:
            return None
        real = np.empty(np.shape(unwrap(a)), dtype=dtype or unwrap(a).dtype)
        return _filled(rec, real, value)

    return f


def _filled(rec: Recorder, real: np.ndarray, value: Any) -> Any:
    """A fresh array filled with ``value`` (None: uninitialised, as np.empty)."""
    if value is not None:
        real[...] = value
    if not traceable(real) or isinstance(value, (np.ndarray, Traced)):
        return lift(rec, real)
    out = Traced.fresh(rec, real)
    if value is not None:
        rec.emit(Instruction(Opcode.COPY, (out._v,), (Literal(np.asarray(value).item()),)))
    return out


def _shape_fn(name: str) -> Callable[..., Any]:
    def f(rec: Recorder, a: Any, *args: Any, **kw: Any) -> Any:
        if not isinstance(a, Traced):
            return None
        return getattr(a, name)(*args, **kw)

    return f


def _product(via: str) -> Callable[..., Any]:
    """``np.dot``, ``np.inner``, ``np.outer`` of two arrays as a CONTRACT (``out=``: NumPy)."""
    def f(rec: Recorder, a: Any, b: Any, out: Any = None) -> Any:
        return None if out is not None else contraction(rec, via, a, b)

    return f


def _einsum(rec: Recorder, *operands: Any, **kw: Any) -> Any:
    """``np.einsum(subscripts, a, b)`` as a CONTRACT; other forms (one or three operands,
    the interleaved form, ``out=``, ``dtype=``, ``optimize=``) run as NumPy."""
    if kw or len(operands) != 3 or not isinstance(operands[0], str):
        return None
    return contraction(rec, "einsum", operands[1], operands[2], operands[0])


def _roll(rec: Recorder, a: Any, shift: Any, axis: Any = None) -> Any:
    """``np.roll`` as two copies into a new array (one when the shift is a whole turn): a
    periodic stencil's rolls are then views the graph sees, not OPAQUE calls that cut its
    block. Several axes roll one after the other, as NumPy's result is; ``axis=None`` rolls
    the flattened array (reshaped back)."""
    if not isinstance(a, Traced) or a._scalar or a.ndim == 0:
        return None
    if axis is None:
        if not isinstance(shift, (int, np.integer)):
            return None
        return _roll(rec, a.reshape(-1), shift, 0).reshape(a.shape)
    shifts = tuple(shift) if isinstance(shift, (tuple, list)) else (shift,)
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    if len(shifts) == 1 and len(axes) > 1:
        shifts = shifts * len(axes)
    if len(axes) == 1 and len(shifts) > 1:
        axes = axes * len(shifts)
    if len(shifts) != len(axes) or not all(isinstance(s, (int, np.integer)) for s in shifts) \
            or not all(isinstance(x, (int, np.integer)) and -a.ndim <= x < a.ndim for x in axes):
        return None
    # NumPy adds the shifts of a repeated axis: roll once per axis by the sum
    total: dict[int, int] = {}
    for s, x in zip(shifts, axes):
        total[int(x) % a.ndim] = total.get(int(x) % a.ndim, 0) + int(s)
    out = a
    for x, s in total.items():
        out = _roll_axis(rec, out, s, x)
    return out if out is not a else a.copy()


def _roll_axis(rec: Recorder, a: Any, shift: int, axis: int) -> Any:
    n = a.shape[axis]
    s = shift % n if n else 0
    if s == 0:
        return a
    out = _filled(rec, np.empty(a.shape, dtype=a.dtype), None)
    head = (slice(None),) * axis
    out[head + (slice(s, None),)] = a[head + (slice(None, n - s),)]
    out[head + (slice(None, s),)] = a[head + (slice(n - s, None),)]
    return out


def _clip(rec: Recorder, a: Any, a_min: Any = None, a_max: Any = None, out: Any = None, **kw: Any) -> Any:
    """``np.clip`` as NumPy defines it: ``minimum(maximum(a, a_min), a_max)`` (NaN stays NaN;
    a minimum above the maximum gives the maximum). ``out=`` and other keywords: NumPy."""
    lo, hi = kw.pop("min", a_min), kw.pop("max", a_max)
    if out is not None or kw or not isinstance(a, Traced) or (lo is None and hi is None):
        return None
    got = a if lo is None else np.maximum(a, lo)
    got = got if hi is None else np.minimum(got, hi)
    return got


def _nan_to_num(rec: Recorder, x: Any, copy: bool = True, nan: Any = 0.0, posinf: Any = None,
                neginf: Any = None) -> Any:
    """``np.nan_to_num`` of a real float array as three selections (NaN, +inf, -inf, each
    replaced as NumPy replaces it); integers and bools come back as a copy. In place
    (``copy=False``) and complex arrays: NumPy."""
    if not isinstance(x, Traced) or not copy or x.dtype.kind == "c":
        return None
    if x.dtype.kind != "f":
        return x.copy()
    big = np.finfo(x.dtype).max
    got = np.where(x != x, nan, x)
    got = np.where(got == np.inf, big if posinf is None else posinf, got)
    got = np.where(got == -np.inf, -big if neginf is None else neginf, got)
    return got.astype(x.dtype) if got.dtype != x.dtype else got


def _shaped(a: Any, shape: tuple[int, ...]) -> Any:
    """``a`` reshaped (a traced array's view, or NumPy's array of a plain value)."""
    return a.reshape(shape) if isinstance(a, Traced) else np.reshape(np.asarray(a), shape)


def _concatenate(rec: Recorder, arrays: Any, axis: Any = 0, out: Any = None, **kw: Any) -> Any:
    """``np.concatenate`` as copies of each piece into one new base (the graph sees each
    piece's view). ``out=``, ``dtype=``, ``casting=``: NumPy."""
    if out is not None or kw or not isinstance(arrays, (list, tuple)) or not arrays:
        return None
    if not any(isinstance(a, Traced) for a in arrays):
        return None
    if axis is None:
        arrays = [_shaped(a, (-1,)) for a in arrays]
        axis = 0
    real = np.concatenate([unwrap(a) for a in arrays], axis=axis)
    if not traceable(real):
        return None
    axis = int(axis) % real.ndim
    if not rec.room(len(arrays) + 1):   # one copy per piece would pass the capture's budget
        rec.stop()
        return real
    result = _filled(rec, np.empty(real.shape, dtype=real.dtype), None)
    at = 0
    head = (slice(None),) * axis
    for a in arrays:
        n = np.shape(unwrap(a))[axis]
        if n:
            result[head + (slice(at, at + n),)] = a
        at += n
    return result


def _joined(rec: Recorder, arrays: Any, axis: int, shape_of: Callable[[tuple[int, ...]], tuple[int, ...]]) -> Any:
    if not isinstance(arrays, (list, tuple)) or not arrays:
        return None
    return _concatenate(rec, [_shaped(a, shape_of(np.shape(unwrap(a)))) for a in arrays], axis)


def _stack(rec: Recorder, arrays: Any, axis: int = 0, out: Any = None, **kw: Any) -> Any:
    """``np.stack``: each piece with a new axis of length 1, concatenated along it."""
    if out is not None or kw or not isinstance(arrays, (list, tuple)) or not arrays:
        return None
    ndim = np.ndim(unwrap(arrays[0])) + 1
    if not isinstance(axis, (int, np.integer)) or not -ndim <= axis < ndim:
        return None
    at = int(axis) % ndim
    return _joined(rec, arrays, at, lambda s: s[:at] + (1,) + s[at:])


def _vstack(rec: Recorder, tup: Any, **kw: Any) -> Any:
    """``np.vstack``: 1-D pieces as rows, then concatenated along axis 0."""
    return None if kw else _joined(rec, tup, 0, lambda s: s if len(s) >= 2 else (1,) + s if s else (1, 1))


def _hstack(rec: Recorder, tup: Any, **kw: Any) -> Any:
    """``np.hstack``: along axis 0 for 1-D pieces, axis 1 otherwise."""
    if kw or not isinstance(tup, (list, tuple)) or not tup:
        return None
    one_d = all(np.ndim(unwrap(a)) <= 1 for a in tup)
    return _joined(rec, tup, 0 if one_d else 1, lambda s: s if s else (1,))


def _dstack(rec: Recorder, tup: Any) -> Any:
    """``np.dstack``: pieces made 3-D (``(n,)`` as ``(1, n, 1)``, ``(m, n)`` as ``(m, n, 1)``)."""
    return _joined(rec, tup, 2, lambda s: (1, 1, 1) if not s else (1,) + s + (1,) if len(s) == 1
                   else s + (1,) if len(s) == 2 else s)


def _column_stack(rec: Recorder, tup: Any) -> Any:
    """``np.column_stack``: 1-D pieces as columns, then concatenated along axis 1."""
    return _joined(rec, tup, 1, lambda s: s + (1,) if len(s) == 1 else s)


#: more copies than this in one ``np.tile`` run as NumPy's one call
_TILE_COPIES = 64


def _tile(rec: Recorder, A: Any, reps: Any) -> Any:
    """``np.tile`` as one copy of ``A`` per tile into a new base (at most
    :data:`_TILE_COPIES` of them)."""
    if not isinstance(A, Traced) or A._scalar:
        return None
    reps = tuple(int(r) for r in (reps if isinstance(reps, (tuple, list)) else (reps,)))
    d = max(len(reps), A.ndim)
    reps = (1,) * (d - len(reps)) + reps
    if any(r < 0 for r in reps) or int(np.prod(reps)) > _TILE_COPIES:
        return None
    src = _shaped(A, (1,) * (d - A.ndim) + A.shape)
    real = np.tile(A._real, reps)
    if not rec.room(int(np.prod(reps)) + 1):   # one copy per tile would pass the capture's budget
        rec.stop()
        return real
    result = _filled(rec, np.empty(real.shape, dtype=real.dtype), None)
    if real.size:
        for where in np.ndindex(*reps):
            result[tuple(slice(k * n, (k + 1) * n) for k, n in zip(where, src.shape))] = src
    return result


_TABLE: dict[Callable[..., Any], Callable[..., Any]] = {
    np.dot: _product("dot"),
    np.inner: _product("inner"),
    np.outer: _product("outer"),
    np.einsum: _einsum,
    np.sum: _sum,
    np.prod: _prod,
    np.max: _extreme(np.maximum),
    np.amax: _extreme(np.maximum),
    np.min: _extreme(np.minimum),
    np.amin: _extreme(np.minimum),
    np.argmin: _arg(Opcode.ARGMIN_REDUCE),
    np.argmax: _arg(Opcode.ARGMAX_REDUCE),
    np.all: _logical(np.logical_and),
    np.any: _logical(np.logical_or),
    np.mean: _mean,
    np.var: _var,
    np.std: _std,
    np.cumsum: _scan(np.add),
    np.cumprod: _scan(np.multiply),
    np.where: _where,
    np.extract: _extract,
    np.compress: _compress,
    np.take: _take,
    np.bincount: _bincount,
    np.copy: _copy,
    np.roll: _roll,
    np.clip: _clip,
    np.nan_to_num: _nan_to_num,
    np.concatenate: _concatenate,
    np.stack: _stack,
    np.vstack: _vstack,
    np.hstack: _hstack,
    np.dstack: _dstack,
    np.column_stack: _column_stack,
    np.tile: _tile,
    np.zeros_like: _like(0),
    np.ones_like: _like(1),
    np.empty_like: _like(None),
    np.full_like: _like("full"),
    np.reshape: _shape_fn("reshape"),
    np.transpose: _shape_fn("transpose"),
    np.ravel: _shape_fn("ravel"),
    np.squeeze: _shape_fn("squeeze"),
    np.swapaxes: _shape_fn("swapaxes"),
}

_NO_DATA = {np.shape, np.ndim, np.size, np.result_type, np.may_share_memory, np.shares_memory}


def dispatch(rec: Recorder, func: Callable[..., Any], types: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``__array_function__``: record ``func`` if we know it, else run it as OPAQUE; with
    an argument capture cannot describe (an ndarray subclass, another array library), as
    plain NumPy."""
    if func in _NO_DATA:
        return func(*unwrap(args), **unwrap(kwargs))
    if any(t is not Traced and not issubclass(t, np.ndarray) or _foreign_array(t) for t in types):
        return plain_call(rec, f"{_name(func)} of {', '.join(t.__name__ for t in types)}", func, args, kwargs)
    handler = _TABLE.get(func)
    if handler is not None:
        try:
            got = handler(rec, *args, **kwargs)
        except Exception:  # the general path below records it, or raises NumPy's own error
            got = None
        if got is not None:
            return got
    return opaque(rec, _name(func), func, args, kwargs)


def _foreign_array(t: type) -> bool:
    return t is not Traced and t is not np.ndarray and issubclass(t, np.ndarray)


def _name(func: Callable[..., Any]) -> str:
    module = (getattr(func, "__module__", None) or "numpy").replace("numpy", "np", 1)
    if module.startswith("np.") and module.count(".") == 1 and module.endswith(("_core", "core")) or module.startswith("np._"):
        module = "np"
    return f"{module}.{getattr(func, '__name__', 'function')}"


# --------------------------------------------------------------------------- the proxy


class Recording:
    """A NumPy callable as captured code sees it (``np.zeros``, ``rng.random``): calls are
    recorded; ``real`` is the callable itself, which the user gets back after the capture."""

    def __init__(self, real: Callable[..., Any], call: Callable[..., Any], rec: Recorder | None = None) -> None:
        self.real, self._call, self._rec = real, call, rec
        functools.update_wrapper(self, real)  # type: ignore[arg-type]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # past the capture's budget: NumPy's own call
        if self._rec is not None and self._rec.halting and self._rec.plain():
            return self.real(*unwrap(args), **unwrap(kwargs))
        return self._call(*args, **kwargs)

    def __repr__(self) -> str:
        return repr(self.real)


class Proxy(types.ModuleType):
    """A module that looks up everything on a real one, with some names overridden."""

    def __init__(self, name: str, real: types.ModuleType, overrides: dict[str, Any],
                 wrap: Callable[[Any], Any] | None = None) -> None:
        super().__init__(name)
        self.__dict__.update(overrides)
        self._real = real
        self._wrap = wrap

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._real, name)
        if self._wrap is None or name.startswith("_"):
            return value
        wrapped = self._wrap(value)
        if wrapped is not value:
            self.__dict__[name] = wrapped  # one stand-in per name: np.eye is np.eye
        return wrapped

    def __dir__(self) -> list[str]:
        return sorted(set(dir(self._real)) | set(self.__dict__))

    @property
    def real_module(self) -> types.ModuleType:
        """The module this one stands for (not ``real``: that is ``np.real``)."""
        return self._real


def make_numpy(rec: Recorder) -> Proxy:
    """The ``numpy`` that captured code sees."""

    def creator(fill: Any) -> Callable[..., Any]:
        real_fn = {0: np.zeros, 1: np.ones, None: np.empty}[fill]

        def f(shape: Any, dtype: Any = float, order: str = "C", **kw: Any) -> Any:
            if kw or order != "C":
                return _lift_result(rec, real_fn(unwrap(shape), dtype, order, **kw))
            return _filled(rec, real_fn(unwrap(shape), dtype=dtype), fill)

        return Recording(real_fn, f, rec)

    def full(shape: Any, fill_value: Any, dtype: Any = None, order: str = "C", **kw: Any) -> Any:
        if kw or isinstance(fill_value, (Traced, np.ndarray)) or order != "C":
            return _lift_result(rec, np.full(unwrap(shape), unwrap(fill_value), dtype, order, **kw))
        return _filled(rec, np.full(unwrap(shape), fill_value, dtype=dtype), fill_value)

    def arange(*args: Any, dtype: Any = None, **kw: Any) -> Any:
        real = np.arange(*unwrap(args), dtype=dtype, **kw)
        if kw or any(isinstance(a, Traced) for a in args) or real.size < 2 or real.dtype.kind not in "iuf" \
                or not recordable(real.dtype):
            return _lift_result(rec, real)
        start, step = real[0].item(), (real[1] - real[0]).item()
        out = Traced.fresh(rec, real)
        attrs = {} if (start, step) == (0, 1) else {"start": start, "step": step}
        rec.emit(Instruction(Opcode.RANGE, (out._v,), (), attrs))
        return out

    def linspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, retstep: bool = False,
                 dtype: Any = None, axis: int = 0, **kw: Any) -> Any:
        real = np.linspace(unwrap(start), unwrap(stop), unwrap(num), endpoint, retstep, dtype, axis, **kw)
        real_numbers = all(isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool)
                           for x in (start, stop))
        if retstep or kw or not real_numbers or np.ndim(real) != 1 or num < 2 or real.dtype.kind != "f":
            return _lift_result(rec, real) if not retstep else real
        step = (float(stop) - float(start)) / ((num - 1) if endpoint else num)
        # RANGE computes start + step * i; NumPy's linspace does that too but then sets the
        # last element to ``stop`` exactly (RANGE's ``stop``), and divides differently when
        # the step underflows: record RANGE only when it reproduces every element bit for bit
        ranged = float(start) + step * np.arange(real.size)
        if real.dtype != np.float64 or not np.array_equal(ranged[:-1], real[:-1]):
            return _lift_result(rec, real)
        out = Traced.fresh(rec, real)
        attrs = {"start": float(start), "step": step}
        if ranged[-1] != real[-1]:
            attrs["stop"] = real[-1].item()
        rec.emit(Instruction(Opcode.RANGE, (out._v,), (), attrs))
        return out

    def array(obj: Any, dtype: Any = None, *args: Any, copy: Any = True, **kw: Any) -> Any:
        if isinstance(obj, Traced):
            if args or kw:
                return opaque(rec, "np.array", np.array, (obj, dtype) + args, kw)
            if copy is False and not obj._scalar:
                return obj
            return array_copy(obj, dtype or obj.dtype)
        return _lift_result(rec, np.array(unwrap(obj), dtype, *args, copy=copy, **kw))

    def asarray(obj: Any, dtype: Any = None, *args: Any, **kw: Any) -> Any:
        # a traced array already is the array: np.asarray(a) is a; a NumPy scalar becomes a
        # new 0-d array (np.asarray(x.mean()) is an ndarray, not the np.float64)
        same = dtype is None or np.dtype(dtype) == obj.dtype if isinstance(obj, Traced) else False
        if isinstance(obj, Traced) and not args and not kw and same and not obj._scalar:
            return obj
        if isinstance(obj, Traced) and not args and not kw and recordable(dtype or obj.dtype):
            return array_copy(obj, dtype or obj.dtype) if obj._scalar else obj.astype(dtype)
        return np.asarray(obj if isinstance(obj, Traced) else unwrap(obj), dtype, *args, **kw)

    def ascontiguousarray(obj: Any, dtype: Any = None, **kw: Any) -> Any:
        # a C-contiguous traced array is handed back itself, as NumPy does (``c is a``);
        # otherwise a recorded C-ordered copy (it went out through __array_interface__)
        if isinstance(obj, Traced) and not kw and not obj._scalar and obj.ndim >= 1 \
                and recordable(dtype or obj.dtype):
            if np.dtype(dtype or obj.dtype) == obj.dtype and obj._real.flags.c_contiguous:
                return obj
            return array_copy(obj, dtype or obj.dtype)
        return np.ascontiguousarray(obj if isinstance(obj, Traced) else unwrap(obj), dtype, **kw)

    def asanyarray(obj: Any, *args: Any, **kw: Any) -> Any:
        # a traced array is an ndarray (np.asarray's rule); a subclass (np.matrix) stays one
        return asarray(obj, *args, **kw) if isinstance(obj, Traced) else np.asanyarray(unwrap(obj), *args, **kw)

    overrides: dict[str, Any] = {
        "ascontiguousarray": Recording(np.ascontiguousarray, ascontiguousarray, rec),
        "asanyarray": Recording(np.asanyarray, asanyarray, rec),
        "zeros": creator(0), "ones": creator(1), "empty": creator(None),
        "full": Recording(np.full, full, rec), "arange": Recording(np.arange, arange, rec),
        "linspace": Recording(np.linspace, linspace, rec), "array": Recording(np.array, array, rec),
        "asarray": Recording(np.asarray, asarray, rec),
        "random": make_random(rec), "lib": make_lib(rec),
    }
    return Proxy("numpy", np, overrides, wrap=lambda fn: _lifting(rec, fn))


#: What a NumPy function is: Python functions (``np.eye``, ``np.fromfunction``), C ones
#: (``np.fromiter``) and the ``__array_function__`` dispatchers (``np.meshgrid``).
_FUNCTION_TYPES = (types.FunctionType, types.BuiltinFunctionType, type(np.concatenate))


def _lifting(rec: Recorder, fn: Any) -> Any:
    """A NumPy function no rule records (``np.eye``, ``np.fromfunction``, ``np.indices``,
    ``np.meshgrid`` of plain lists) as captured code sees it: called as it is, with the
    new arrays it returns lifted as program inputs, so that the code using them is
    captured rather than run as plain NumPy unseen. Only arrays that own their memory are
    lifted (a view of an array capture does not know could alias another input), and
    only when no traced array went in (then ``__array_function__`` has already decided)."""
    if not isinstance(fn, _FUNCTION_TYPES):
        return fn

    def call(*args: Any, **kwargs: Any) -> Any:
        result = fn(*args, **kwargs)
        if _holds_traced(args) or _holds_traced(kwargs.values()):
            return result
        if type(result) in (list, tuple):
            return type(result)(_lift_fresh(rec, r) for r in result)
        return _lift_fresh(rec, result)

    return Recording(fn, call, rec)


def _holds_traced(values: Any) -> bool:
    return any(isinstance(v, Traced) or isinstance(v, (list, tuple)) and _holds_traced(v) for v in values)


def _lift_fresh(rec: Recorder, real: Any) -> Any:
    return lift(rec, real) if type(real) is np.ndarray and real.base is None else real


def make_lib(rec: Recorder) -> Proxy:
    """``numpy.lib`` under capture: ``stride_tricks.as_strided`` gives traced views."""
    real = np.lib.stride_tricks

    def as_strided(x: Any, shape: Any = None, strides: Any = None, subok: bool = False, writeable: bool = True) -> Any:
        out = real.as_strided(unwrap(x), shape, strides, subok, writeable)
        if not isinstance(x, Traced):
            return out
        got = as_view(rec, out, (x,), "np.lib.stride_tricks.as_strided")
        return got if got is not None else out

    tricks = Proxy("numpy.lib.stride_tricks", real, {"as_strided": Recording(real.as_strided, as_strided, rec)})
    return Proxy("numpy.lib", np.lib, {"stride_tricks": tricks})


def _lift_result(rec: Recorder, real: Any) -> Any:
    return lift(rec, real) if isinstance(real, np.ndarray) else real


def _random_array(rec: Recorder, what: str, real: Any, redraw: Callable[[], Any] | None = None) -> Any:
    """Record a random array as RANDOM with its values kept for re-execution (and the call
    that draws it again on a generator of its own, ``redraw``, when there is one)."""
    if not traceable(real) or real.ndim == 0:
        return real
    key = rec.next_key()
    rec.externals.arrays[key] = real.copy()
    if redraw is not None:
        rec.externals.redraws[key] = redraw
    out = Traced.fresh(rec, real)
    rec.emit(Instruction(Opcode.RANDOM, (out._v,), (), {"key": key, "name": what}))
    return out


def _random_call(rec: Recorder, what: str, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Call a random function on real data: array results are recorded draws; traced
    arrays it changed in place (``shuffle``) are reloaded."""
    traced = [a for a in list(args) + list(kwargs.values()) if isinstance(a, Traced)]
    result = fn(*unwrap(args), **unwrap(kwargs))
    if result is None and traced:
        reload_all(rec, traced)
        rec.notice(NoticeKind.OPAQUE, what)
    written = _written_into(result, traced)
    if written is not None:   # ``rng.permuted(x, out=x)``, ``rng.random(out=a[0])``: the draw is in the cell's array
        reload_all(rec, [written])
        rec.notice(NoticeKind.OPAQUE, what)
        return written
    return _random_array(rec, what, result, _redraw(fn, unwrap(args), unwrap(kwargs)))


def _redraw(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Callable[[], Any] | None:
    """The same draw again on a generator of its own (a ``RandomState`` or a ``Generator``
    with the same bit generator): the same work as the cell's call, never its numbers nor
    its streams. Array arguments are copied as they were. ``None`` when ``fn`` is not a
    method of NumPy's random-state objects."""
    owner = getattr(fn, "__self__", None)
    name = getattr(fn, "__name__", "")
    if isinstance(owner, np.random.Generator):
        fresh: Any = np.random.Generator(type(owner.bit_generator)(0))
    elif isinstance(owner, np.random.RandomState):
        fresh = np.random.RandomState(0)
    else:
        return None
    method = getattr(fresh, name, None)
    if method is None:
        return None
    kept_args = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)
    kept = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in kwargs.items()}
    if "out" in kept:   # a draw into the cell's array is not repeated into it
        return None
    return lambda: method(*kept_args, **kept)


def _written_into(result: Any, traced: list[Traced]) -> Traced | None:
    """The traced argument a random call returned its values in (its ``out=``), or None: a
    new RANDOM array in its place would leave the cell's array as it was before the call."""
    if not isinstance(result, np.ndarray):
        return None
    return next((t for t in traced if not t._scalar and np.may_share_memory(result, t._real)), None)


#: NumPy's random-state objects whose methods may take a cell's arrays (``shuffle``,
#: ``permutation``, ``choice``): Cython code that reads a stand-in as a sequence
_RANDOM_STATES = (np.random.RandomState, np.random.Generator)


def random_method(fn: Any) -> Callable[..., Any] | None:
    """For a bound method of a real ``RandomState`` or ``Generator`` (one the cell made with
    ``np.random.RandomState(seed)``, or an earlier plain cell's), a call that hands it real
    arrays and reloads the traced arrays it shuffled in place (:func:`_random_call`);
    ``None`` for anything else. Without it ``rs.shuffle(x)`` swapped the stand-in's rows
    through ``__getitem__`` views, which duplicated rows (a wrong answer), and
    ``rs.permutation(x)`` permuted stand-ins."""
    owner = getattr(fn, "__self__", None)
    if not isinstance(owner, _RANDOM_STATES) or not callable(fn):
        return None
    what = f"{type(owner).__name__}.{getattr(fn, '__name__', 'method')}"

    def call(*args: Any, **kwargs: Any) -> Any:
        rec = next((a._rec for a in (*args, *kwargs.values()) if isinstance(a, Traced)), None)
        if rec is None:   # nothing traced goes in: plain NumPy's call, its arrays new inputs
            return fn(*args, **kwargs)
        return _random_call(rec, what, fn, args, kwargs)

    return call


class GeneratorProxy:
    """A ``numpy.random.Generator`` whose array results are recorded as RANDOM; ``real``
    is the generator itself (its state is plain NumPy's), which the user gets back."""

    def __init__(self, rec: Recorder, real: np.random.Generator, label: str) -> None:
        self._rec, self.real, self._label = rec, real, label

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.real, name)
        if not callable(attr):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            return _random_call(self._rec, f"{self._label}.{name}", attr, args, kwargs)

        return Recording(attr, call, self._rec)

    def __repr__(self) -> str:
        return repr(self.real)


def make_random(rec: Recorder) -> Proxy:
    """``numpy.random`` under capture: the same generators and streams as plain NumPy."""
    real = np.random

    def default_rng(seed: Any = None) -> GeneratorProxy:
        return GeneratorProxy(rec, real.default_rng(unwrap(seed)), f"default_rng({seed!r})")

    overrides: dict[str, Any] = {"default_rng": Recording(real.default_rng, default_rng, rec)}
    for name in ("random", "rand", "randn", "uniform", "normal", "random_sample", "randint", "standard_normal",
                 "exponential", "poisson", "integers", "choice", "permutation", "shuffle"):
        fn = getattr(real, name, None)
        if fn is None:
            continue

        def make(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
            def call(*args: Any, **kwargs: Any) -> Any:
                return _random_call(rec, f"np.random.{name}", fn, args, kwargs)

            return call

        overrides[name] = Recording(fn, make(fn, name), rec)
    return Proxy("numpy.random", real, overrides)
