"""``Traced``: the stand-in array that records what NumPy does to it.

It implements NumPy's protocols (``__array_ufunc__``, ``__array_function__``) and the
ndarray methods people use; every operation runs on the real data and is recorded as
bytecode. What it cannot express runs as an OPAQUE instruction with a notice; a value that
leaves (``float()``, ``print``, ``if``, ``np.asarray``) is SYNCed, which ends a batch.
"""

from __future__ import annotations

import operator
from typing import Any, Callable

import numpy as np

from ..bytecode import Instruction, Literal, Opcode, OpFamily, ProgramError, View, check_instruction
from .recorder import Handle, NoticeKind, Recorder

_REDUCE = {"add": Opcode.ADD_REDUCE, "multiply": Opcode.MULTIPLY_REDUCE, "maximum": Opcode.MAXIMUM_REDUCE,
           "minimum": Opcode.MINIMUM_REDUCE, "logical_and": Opcode.LOGICAL_AND_REDUCE,
           "logical_or": Opcode.LOGICAL_OR_REDUCE}
_SCAN = {"add": Opcode.ADD_ACCUMULATE, "multiply": Opcode.MULTIPLY_ACCUMULATE}
_UFUNCS = {op.value: op for op in OpFamily.UNARY | OpFamily.BINARY}
_UFUNCS["true_divide"] = Opcode.DIVIDE
_UFUNCS["abs"] = Opcode.ABSOLUTE
_UFUNCS["mod"] = Opcode.REMAINDER


def unwrap(x: Any) -> Any:
    """Real data for traced arrays, through lists, tuples and dicts."""
    if isinstance(x, Traced):
        return x._real if not x._scalar else x._real[()]
    if isinstance(x, tuple):
        return tuple(unwrap(y) for y in x)
    if isinstance(x, list):
        return [unwrap(y) for y in x]
    if isinstance(x, dict):
        return {k: unwrap(v) for k, v in x.items()}
    return x


class Traced:
    """An array under capture: a view of a recorded base plus the real data it stands for."""

    __array_priority__ = 1000

    def __init__(self, rec: Recorder, handle: Handle, view: View, real: np.ndarray, scalar: bool = False) -> None:
        self._rec, self._h, self._v, self._real, self._scalar = rec, handle, view, real, scalar

    # -- construction helpers ---------------------------------------------------------
    @classmethod
    def fresh(cls, rec: Recorder, real: np.ndarray, scalar: bool = False) -> "Traced":
        if not real.flags.c_contiguous:
            real = np.array(real, order="C")
        h = rec.new_base(real)
        return cls(rec, h, h.base.view(), real, scalar)

    def _derive(self, fn: Callable[[np.ndarray], np.ndarray]) -> "Traced":
        """Apply a NumPy view operation (slicing, reshape, transpose) to both the real data
        and the IR geometry; when NumPy copies, so does the program."""
        real = fn(self._real)
        g = self._h.geometry()
        v = self._v
        shaped = fn(np.lib.stride_tricks.as_strided(g[v.offset:], shape=v.shape, strides=v.strides))
        ir_view = shaped.base is not None and np.may_share_memory(shaped, g)
        real_view = real.size == 0 or np.may_share_memory(real, self._real)
        if ir_view:
            offset = shaped.__array_interface__["data"][0] - g.__array_interface__["data"][0]
            view = View(self._h.base, shaped.shape, shaped.strides, offset if shaped.size else 0)
            if real_view:
                return Traced(self._rec, self._h, view, real)
            out = Traced.fresh(self._rec, np.array(real, copy=True))
            self._rec.emit(Instruction(Opcode.COPY, (out._v,), (view,)))
            return out
        return _opaque(self._rec, "reshape copy", lambda a: np.array(fn(a), copy=True), (self,), {})

    # -- ndarray-like attributes ---------------------------------------------------------
    shape = property(lambda self: self._real.shape)
    ndim = property(lambda self: self._real.ndim)
    size = property(lambda self: self._real.size)
    dtype = property(lambda self: self._real.dtype)
    itemsize = property(lambda self: self._real.itemsize)
    nbytes = property(lambda self: self._real.nbytes)
    T = property(lambda self: self.transpose())

    def __len__(self) -> int:
        return len(self._real)

    def __repr__(self) -> str:
        self._rec.sync(self._v, "repr")
        return repr(unwrap(self))

    def __str__(self) -> str:
        self._rec.sync(self._v, "str")
        return str(unwrap(self))

    def __format__(self, spec: str) -> str:
        self._rec.sync(self._v, "format")
        return format(unwrap(self), spec)

    # values leaving the captured world
    def _leave(self, why: str) -> Any:
        self._rec.sync(self._v, why)
        return unwrap(self)

    def __bool__(self) -> bool:
        return bool(self._leave("bool()"))

    def __float__(self) -> float:
        return float(self._leave("float()"))

    def __int__(self) -> int:
        return int(self._leave("int()"))

    def __index__(self) -> int:
        return operator.index(self._leave("index"))

    def __complex__(self) -> complex:
        return complex(self._leave("complex()"))

    def item(self, *args: Any) -> Any:
        return np.asarray(self._leave("item()")).item(*args)

    def tolist(self) -> Any:
        return np.asarray(self._leave("tolist()")).tolist()

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        real = np.asarray(self._leave("np.asarray"))
        return real if dtype is None else real.astype(dtype)

    def __iter__(self):  # type: ignore[no-untyped-def]
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        for i in range(len(self)):
            yield self[i]

    # -- protocols ---------------------------------------------------------------------
    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        return _ufunc(self._rec, ufunc, method, inputs, kwargs)

    def __array_function__(self, func: Callable[..., Any], types: Any, args: Any, kwargs: Any) -> Any:
        from .functions import dispatch

        return dispatch(self._rec, func, args, kwargs)

    # -- operators ---------------------------------------------------------------------
    def __getitem__(self, key: Any) -> Any:
        if _is_basic(key):
            full_int = isinstance(key, (int, np.integer)) and self.ndim == 1 or (
                isinstance(key, tuple) and len(key) == self.ndim and all(isinstance(k, (int, np.integer)) for k in key)
            )
            vkey = _view_key(key)
            if full_int:  # NumPy gives a scalar copy, not a view
                return _copy_of(self._derive(lambda a: a[vkey]), scalar=True)
            return self._derive(lambda a: a[vkey])
        return _opaque(self._rec, "fancy indexing", lambda a, k: a[k], (self, key), {})

    def __setitem__(self, key: Any, value: Any) -> None:
        rec = self._rec
        if _is_basic(key):
            vkey = _view_key(key)
            target = self._derive(lambda a: a[vkey])
            value = lift(rec, value)
            target._real[...] = unwrap(value)
            _emit(rec, Instruction(Opcode.COPY, (target._v,), (_operand(value),)))
            return
        if isinstance(key, Traced) and key.dtype == bool and key.shape == self.shape:
            value = lift(rec, value)
            np.copyto(self._real, unwrap(value), where=key._real, casting="unsafe")
            _emit(rec, Instruction(Opcode.WHERE, (self._v,), (key._v, _operand(value), self._v)))
            return

        def setter(a: np.ndarray, k: Any, v: Any) -> np.ndarray:
            a = a.copy()
            a[k] = v
            return a

        result = setter(self._real, unwrap(key), unwrap(value))
        _opaque(rec, "indexed assignment", setter, (self, key, value), {}, out_view=self, precomputed=result)

    # arithmetic through the ufuncs, so NumPy's rules (and __array_ufunc__) apply
    def __add__(self, o: Any) -> Any: return np.add(self, o)
    def __radd__(self, o: Any) -> Any: return np.add(o, self)
    def __iadd__(self, o: Any) -> Any: return np.add(self, o, out=(self,))
    def __sub__(self, o: Any) -> Any: return np.subtract(self, o)
    def __rsub__(self, o: Any) -> Any: return np.subtract(o, self)
    def __isub__(self, o: Any) -> Any: return np.subtract(self, o, out=(self,))
    def __mul__(self, o: Any) -> Any: return np.multiply(self, o)
    def __rmul__(self, o: Any) -> Any: return np.multiply(o, self)
    def __imul__(self, o: Any) -> Any: return np.multiply(self, o, out=(self,))
    def __truediv__(self, o: Any) -> Any: return np.true_divide(self, o)
    def __rtruediv__(self, o: Any) -> Any: return np.true_divide(o, self)
    def __itruediv__(self, o: Any) -> Any: return np.true_divide(self, o, out=(self,))
    def __floordiv__(self, o: Any) -> Any: return np.floor_divide(self, o)
    def __rfloordiv__(self, o: Any) -> Any: return np.floor_divide(o, self)
    def __mod__(self, o: Any) -> Any: return np.remainder(self, o)
    def __rmod__(self, o: Any) -> Any: return np.remainder(o, self)
    def __pow__(self, o: Any) -> Any: return np.power(self, o)
    def __rpow__(self, o: Any) -> Any: return np.power(o, self)
    def __ipow__(self, o: Any) -> Any: return np.power(self, o, out=(self,))
    def __neg__(self) -> Any: return np.negative(self)
    def __pos__(self) -> Any: return np.positive(self)
    def __abs__(self) -> Any: return np.absolute(self)
    def __invert__(self) -> Any: return np.invert(self)
    def __lt__(self, o: Any) -> Any: return np.less(self, o)
    def __le__(self, o: Any) -> Any: return np.less_equal(self, o)
    def __gt__(self, o: Any) -> Any: return np.greater(self, o)
    def __ge__(self, o: Any) -> Any: return np.greater_equal(self, o)
    def __eq__(self, o: Any) -> Any: return np.equal(self, o)  # type: ignore[override]
    def __ne__(self, o: Any) -> Any: return np.not_equal(self, o)  # type: ignore[override]
    def __and__(self, o: Any) -> Any: return np.bitwise_and(self, o)
    def __rand__(self, o: Any) -> Any: return np.bitwise_and(o, self)
    def __or__(self, o: Any) -> Any: return np.bitwise_or(self, o)
    def __ror__(self, o: Any) -> Any: return np.bitwise_or(o, self)
    def __xor__(self, o: Any) -> Any: return np.bitwise_xor(self, o)
    def __matmul__(self, o: Any) -> Any: return np.matmul(self, o)
    def __rmatmul__(self, o: Any) -> Any: return np.matmul(o, self)
    __hash__ = None  # type: ignore[assignment]

    # -- methods -----------------------------------------------------------------------
    def sum(self, axis: Any = None, **kw: Any) -> Any: return np.sum(self, axis=axis, **kw)
    def prod(self, axis: Any = None, **kw: Any) -> Any: return np.prod(self, axis=axis, **kw)
    def max(self, axis: Any = None, **kw: Any) -> Any: return np.max(self, axis=axis, **kw)
    def min(self, axis: Any = None, **kw: Any) -> Any: return np.min(self, axis=axis, **kw)
    def mean(self, axis: Any = None, **kw: Any) -> Any: return np.mean(self, axis=axis, **kw)
    def all(self, axis: Any = None, **kw: Any) -> Any: return np.all(self, axis=axis, **kw)
    def any(self, axis: Any = None, **kw: Any) -> Any: return np.any(self, axis=axis, **kw)
    def cumsum(self, axis: Any = None, **kw: Any) -> Any: return np.cumsum(self, axis=axis, **kw)
    def cumprod(self, axis: Any = None, **kw: Any) -> Any: return np.cumprod(self, axis=axis, **kw)
    def dot(self, o: Any) -> Any: return np.dot(self, o)

    def copy(self, order: str = "C") -> "Traced":
        return _copy_of(self)

    def astype(self, dtype: Any, copy: bool = True, **kw: Any) -> "Traced":
        if kw:
            return _opaque(self._rec, "astype", lambda a: a.astype(dtype, **kw), (self,), {})
        if not copy and np.dtype(dtype) == self.dtype:
            return self
        return _copy_of(self, dtype=np.dtype(dtype))

    def reshape(self, *shape: Any, **kw: Any) -> "Traced":
        return self._derive(lambda a: a.reshape(*shape, **kw))

    def transpose(self, *axes: Any) -> "Traced":
        return self._derive(lambda a: a.transpose(*axes))

    def swapaxes(self, a1: int, a2: int) -> "Traced":
        return self._derive(lambda a: a.swapaxes(a1, a2))

    def squeeze(self, axis: Any = None) -> "Traced":
        return self._derive(lambda a: a.squeeze(axis))

    def ravel(self, order: str = "C") -> "Traced":
        return self._derive(lambda a: a.ravel(order))

    def flatten(self, order: str = "C") -> "Traced":
        return _copy_of(self.ravel(order))

    def fill(self, value: Any) -> None:
        self[...] = value

    def sort(self, axis: int = -1) -> None:
        result = np.sort(self._real, axis=axis)
        _opaque(self._rec, "ndarray.sort", lambda a: np.sort(a, axis=axis), (self,), {},
                out_view=self, precomputed=result)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        real_attr = getattr(np.ndarray, name, None)
        if real_attr is None:
            raise AttributeError(f"'ndarray' object has no attribute {name!r}")
        if not callable(real_attr):
            return getattr(self._leave(f"ndarray.{name}"), name)

        def method(*args: Any, **kwargs: Any) -> Any:
            return _opaque(self._rec, f"ndarray.{name}", lambda a, *r, **k: getattr(a, name)(*r, **k),
                           (self,) + args, kwargs)

        return method


# --------------------------------------------------------------------------- helpers


def _view_key(key: Any) -> tuple[Any, ...]:
    """``key`` with a trailing ``...`` unless it has one: integer indexing then gives a 0-d
    view (which can be written through) instead of a scalar copy."""
    items = key if isinstance(key, tuple) else (key,)
    return items if any(k is Ellipsis for k in items) else items + (Ellipsis,)


def _is_basic(key: Any) -> bool:
    items = key if isinstance(key, tuple) else (key,)
    return all(
        k is None or k is Ellipsis or isinstance(k, slice) or (isinstance(k, (int, np.integer)) and not isinstance(k, bool))
        for k in items
    ) and all(not isinstance(k, slice) or all(
        x is None or isinstance(x, (int, np.integer)) for x in (k.start, k.stop, k.step)) for k in items)


def lift(rec: Recorder, x: Any) -> Any:
    """A traced array for a real one (its data become a program input); others unchanged."""
    if isinstance(x, np.ndarray) and x.ndim > 0:
        h = rec.input_base(x)
        return Traced(rec, h, h.base.view(), x)
    return x


def _operand(x: Any) -> View | Literal:
    """The IR operand of a (lifted) traced array or a scalar."""
    if isinstance(x, Traced):
        return x._v
    if isinstance(x, np.ndarray):  # 0-d
        return Literal(x.item())
    if isinstance(x, (bool, int, float, complex, np.generic)):
        return Literal(x.item() if isinstance(x, np.generic) else x)
    raise TypeError(f"cannot use {type(x).__name__} as an array operand")


def _emit(rec: Recorder, ins: Instruction) -> None:
    """Emit ``ins``; inputs overlapping its output without being identical are first
    copied (NumPy buffers such overlaps itself; the bytecode spells the copy out, Def. 11)."""
    try:
        check_instruction(ins)
    except ProgramError:
        out = ins.outputs[0]
        keep = []
        fixed: list[View | Literal] = []
        for x in ins.inputs:
            if isinstance(x, View) and x.overlaps(out) and x != out:
                tmp = Traced.fresh(rec, np.empty(x.shape, dtype=x.dtype))
                rec.emit(Instruction(Opcode.COPY, (tmp._v,), (x,)))
                keep.append(tmp)  # alive until the instruction is emitted, then DEL
                fixed.append(tmp._v)
                rec.notice(NoticeKind.COPY, f"{ins.opcode.name} reads a view overlapping its output")
            else:
                fixed.append(x)
        ins = Instruction(ins.opcode, ins.outputs, tuple(fixed), ins.attrs)
        rec.emit(ins)
        del keep
        return
    rec.emit(ins)


def _copy_of(x: Traced, dtype: Any = None, scalar: bool = False) -> Traced:
    real = np.array(x._real, dtype=dtype, copy=True)
    out = Traced.fresh(x._rec, real, scalar=scalar)
    x._rec.emit(Instruction(Opcode.COPY, (out._v,), (x._v,)))
    return out


def _result(rec: Recorder, real: Any, out: Traced | None) -> Traced:
    """Wrap a ufunc's real result: into ``out`` when given, else a fresh base."""
    if out is not None:
        return out
    scalar = not isinstance(real, np.ndarray)
    return Traced.fresh(rec, np.asarray(real), scalar=scalar)


def _ufunc(rec: Recorder, ufunc: np.ufunc, method: str, inputs: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    out_arg = kwargs.get("out")
    outs = out_arg if isinstance(out_arg, tuple) else ((out_arg,) if out_arg is not None else ())
    extra = set(kwargs) - {"out"}
    if method == "__call__" and ufunc.__name__ in _UFUNCS and ufunc.nout == 1 and not extra and len(outs) <= 1 and \
            all(isinstance(o, Traced) for o in outs):
        out = outs[0] if outs else None
        lifted = [lift(rec, x) for x in inputs]
        real = ufunc(*unwrap(lifted), **({"out": out._real} if out is not None else {}))
        result = _result(rec, real, out)
        _emit(rec, Instruction(_UFUNCS[ufunc.__name__], (result._v,), tuple(_operand(x) for x in lifted)))
        return result
    if method in ("reduce", "accumulate") and not outs and set(kwargs) <= {"axis", "dtype"} and \
            ufunc.__name__ in (_REDUCE if method == "reduce" else _SCAN) and isinstance(inputs[0], Traced) \
            and len(inputs) == 1:
        src: Traced = inputs[0]
        axis = kwargs.get("axis", 0)
        dtype = kwargs.get("dtype")
        if isinstance(axis, (int, np.integer)) or axis is None:
            if dtype is not None and np.dtype(dtype) != src.dtype:
                src = _copy_of(src, dtype=np.dtype(dtype))
            real = getattr(ufunc, method)(src._real, axis=axis)
            result = _result(rec, real, None)
            ax = None if axis is None else int(axis) % max(src.ndim, 1)
            if method == "reduce" and src.ndim == 1:
                ax = None  # one axis: the whole array, and the same element order
            opcode = (_REDUCE if method == "reduce" else _SCAN)[ufunc.__name__]
            rec.emit(Instruction(opcode, (result._v,), (src._v,), {"axis": ax}))
            return result
    name = f"np.{ufunc.__name__}" + ("" if method == "__call__" else f".{method}")
    return _opaque(rec, name, lambda *a, **k: getattr(ufunc, method)(*a, **k), inputs, kwargs)


def _opaque(
    rec: Recorder,
    name: str,
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    out_view: Traced | None = None,
    precomputed: Any = None,
    out_real: Traced | None = None,
) -> Any:
    """Run ``fn`` with real NumPy and record it as one OPAQUE instruction.

    Traced arguments become the instruction's inputs; the function replays the call with
    the values the executor passes in. Results that are not one array leave the captured
    world (their inputs are synced)."""
    args, kwargs = _lift_deep(rec, args), _lift_deep(rec, kwargs)
    traced = [a for a in _flatten((args, kwargs)) if isinstance(a, Traced)]
    real = precomputed if precomputed is not None else fn(*unwrap(args), **unwrap(kwargs))
    if out_view is None and out_real is None and not isinstance(real, (np.ndarray, np.generic)):
        for t in traced:
            rec.sync(t._v, name)
        return real
    rec.notice(NoticeKind.OPAQUE, f"{name}")
    key = rec.next_key()

    # the replay keeps the call's shape, not the traced arrays (they must be free to die)
    template = _template((args, kwargs))

    def replay(*values: Any) -> Any:
        a, k = _replace(template, iter(values))
        return fn(*a, **k)

    rec.externals.functions[key] = replay
    if out_view is not None:
        out_view._real[...] = real
        result = out_view
    elif out_real is not None:
        result = out_real
    else:
        result = Traced.fresh(rec, np.asarray(real), scalar=not isinstance(real, np.ndarray))
    _emit(rec, Instruction(Opcode.OPAQUE, (result._v,), tuple(t._v for t in traced), {"name": name, "key": key}))
    return result


def _flatten(x: Any) -> list[Any]:
    if isinstance(x, (tuple, list)):
        return [y for z in x for y in _flatten(z)]
    if isinstance(x, dict):
        return [y for z in x.values() for y in _flatten(z)]
    return [x]


class _Slot:
    """Where a traced argument goes in a replayed call."""

    __slots__ = ("scalar",)

    def __init__(self, scalar: bool) -> None:
        self.scalar = scalar


def _template(x: Any) -> Any:
    if isinstance(x, Traced):
        return _Slot(x._scalar)
    if isinstance(x, tuple):
        return tuple(_template(y) for y in x)
    if isinstance(x, list):
        return [_template(y) for y in x]
    if isinstance(x, dict):
        return {k: _template(v) for k, v in x.items()}
    return x


def _lift_deep(rec: Recorder, x: Any) -> Any:
    if isinstance(x, np.ndarray):
        return lift(rec, x)
    if isinstance(x, tuple):
        return tuple(_lift_deep(rec, y) for y in x)
    if isinstance(x, list):
        return [_lift_deep(rec, y) for y in x]
    if isinstance(x, dict):
        return {k: _lift_deep(rec, v) for k, v in x.items()}
    return x


def _replace(x: Any, values: Any) -> Any:
    """``x`` with each slot filled by the next of ``values`` (the executor's arrays)."""
    if isinstance(x, _Slot):
        v = next(values)
        return v[()] if x.scalar and isinstance(v, np.ndarray) else v
    if isinstance(x, tuple):
        return tuple(_replace(y, values) for y in x)
    if isinstance(x, list):
        return [_replace(y, values) for y in x]
    if isinstance(x, dict):
        return {k: _replace(v, values) for k, v in x.items()}
    return x
