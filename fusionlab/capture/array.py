"""``Traced``: the stand-in array that records what NumPy does to it.

It implements NumPy's protocols (``__array_ufunc__``, ``__array_function__``) and the
ndarray methods and attributes people use; every operation runs on the real data and is
recorded as bytecode. What it cannot express runs as an OPAQUE instruction, or as plain
NumPy outside the program, with a notice — never as an error NumPy would not raise. A value
that leaves (``float()``, ``print``, ``if``) is SYNCed, which ends a batch.

Memory that NumPy shares in ways the bytecode cannot describe (a view with another dtype,
a plain array aliasing a base, an in-place change by a function run as NumPy) marks the
base *escaped*: its contents are compared with the program's before each use and reloaded
(an OPAQUE ``reload``) when they differ, so the recorded program always replays to what
NumPy computed.
"""

from __future__ import annotations

import operator
import time
import weakref
from typing import Any, Callable

import numpy as np

from fusionlab.ir.bytecode import (
    Instruction, Literal, Opcode, OpFamily, ProgramError, View, check_instruction,
)
from fusionlab.ir.opcodes import OPCODES, opcode_of_ufunc
from fusionlab.capture.masked import Expansion, expand_selection
from fusionlab.capture.scatter import ListedKey, listed_key
from fusionlab.capture.recorder import Handle, NoticeKind, Recorder, call_as_user

#: dtype kinds the bytecode describes (bool, integers, floats, complex)
NUMERIC = "biufc"


def recordable(dtype: Any) -> bool:
    """Whether capture records arrays of ``dtype``: bool, integers, and floats and complex
    of at most 64-bit parts, in the machine's byte order. NumPy's ``longdouble`` (80-bit
    extended precision on x86) is neither a Python number (a literal) nor a Numba type, and
    a byte-swapped dtype (``'>f8'`` on x86: data read from a FITS file or a network buffer)
    is not what a kernel's loads read: such arrays run as plain NumPy.

    >>> recordable(np.float32), recordable("complex128"), recordable(np.longdouble), recordable("U3")
    (True, True, False, False)
    >>> recordable(np.dtype(np.float64).newbyteorder()), recordable(np.dtype(np.uint8).newbyteorder())
    (False, True)
    """
    d = np.dtype(dtype)
    return d.kind in NUMERIC and d.isnative and not (d.kind in "fc" and d.itemsize > (8 if d.kind == "f" else 16))


# attributes that describe an array without reading its data
_METADATA = {"flags", "itemsize", "nbytes", "ndim", "size"}
# attributes that hand out the array's memory to plain NumPy (``flat``: see :class:`TracedFlat`)
_ALIASING = {"base", "data", "ctypes"}


def _items(a: "Traced") -> Any:
    """``iter(a)``'s items, first-axis sub-arrays (plain.py hands a kept one back as
    NumPy's own iterator at the same position, from its ``a`` and ``i``)."""
    for i in range(len(a)):
        yield a[i]


class Foreign(Exception):
    """An operand the bytecode cannot describe (an ndarray subclass, an object array, a
    duck array): the operation runs as plain NumPy."""


def traceable(real: Any) -> bool:
    """Whether ``real`` is an array (or NumPy scalar) capture can record: exactly an
    ndarray (no subclass) of a numeric dtype.

    >>> traceable(np.ones(2)), traceable(np.float32(1)), traceable(np.array(["a"])), traceable(np.matrix([1]))
    (True, True, False, False)
    """
    return (type(real) is np.ndarray or isinstance(real, np.generic)) and recordable(real.dtype)


def unwrap(x: Any) -> Any:
    """Real data for traced arrays, through lists, tuples and dicts."""
    if isinstance(x, Traced):
        return x._real if not x._scalar else x._real[()]
    if isinstance(x, tuple):
        if type(x) is tuple and all(type(y) is int for y in x):   # an index (what a loop past capture's budget passes most)
            return x
        return tuple(unwrap(y) for y in x)
    if isinstance(x, list):
        return [unwrap(y) for y in x]
    if isinstance(x, dict):
        return {k: unwrap(v) for k, v in x.items()}
    return x


def hand_out(x: Any) -> Any:
    """What code outside capture (an installed library's function) is handed for ``x``:
    a traced array's real memory, marked escaped as ``__array__`` marks it (what the
    library writes there is reloaded at the base's next use), a traced scalar's NumPy
    scalar; through lists, tuples and dicts; anything else as it is."""
    if isinstance(x, Traced):
        return x._real[()] if x._scalar else x.__array__()
    if type(x) is tuple:
        return tuple(hand_out(y) for y in x)
    if type(x) is list:
        return [hand_out(y) for y in x]
    if type(x) is dict:
        return {k: hand_out(v) for k, v in x.items()}
    return x


def _positional(fn: Callable[..., Any], params: tuple[str, ...]) -> Callable[..., Any]:
    """An ndarray method that calls NumPy's function ``fn`` with the method's positional
    arguments named as ``ndarray``'s method names them (``params``, in order)."""
    name = fn.__name__

    def method(self: Any, *args: Any, **kw: Any) -> Any:
        if len(args) > len(params):
            raise TypeError(f"{name}() takes at most {len(params)} positional arguments ({len(args)} given)")
        for param, value in zip(params, args):
            if param in kw:
                raise TypeError(f"argument for {name}() given by name ('{param}') and position ({params.index(param) + 1})")
            kw[param] = value
        if fn in (np.all, np.any) and "dtype" in kw:
            # ``ndarray.all``/``any`` take a dtype second (NumPy's ``_methods._all``), which
            # ``np.all`` does not: their logical reduction with that dtype is the same call
            ufunc = np.logical_and if fn is np.all else np.logical_or
            dtype = kw.pop("dtype")
            if dtype is not None:
                return ufunc.reduce(self, dtype=dtype, **{"axis": None, **kw})
        return fn(self, **kw)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"ndarray.{name}: NumPy's ``np.{name}`` of the array, parameters {', '.join(params)}."
    return method


class Traced:
    """An array under capture: a view of a recorded base plus the real data it stands for."""

    __slots__ = ("_rec", "_h", "_v", "_r", "_scalar", "__weakref__")
    __array_priority__ = 1000

    def __init__(self, rec: Recorder, handle: Handle, view: View, real: np.ndarray, scalar: bool = False) -> None:
        self._rec, self._h, self._v, self._r, self._scalar = rec, handle, view, real, scalar
        if handle.owner is None and view is handle.full:
            handle.owner = weakref.ref(self)

    @property
    def _real(self) -> np.ndarray:
        """The real array, after the base's lazy snapshot or reload (see :class:`Handle`)."""
        if self._h.watched:
            self._h.touch()
        return self._r

    # -- construction helpers ---------------------------------------------------------
    @classmethod
    def fresh(cls, rec: Recorder, real: np.ndarray, scalar: bool = False) -> "Traced":
        if not real.flags.c_contiguous:
            real = np.array(real, order="C")
        h = rec.new_base(real)
        return cls(rec, h, h.full, real, scalar)

    def _geometry(self, fn: Callable[[np.ndarray], np.ndarray]) -> View | None:
        """The IR view ``fn`` makes of this one (``None`` when NumPy would copy)."""
        g = self._h.geometry()
        v = self._v
        shaped = fn(np.lib.stride_tricks.as_strided(g[v.offset:], shape=v.shape, strides=v.strides))
        # an empty view shares no memory with anything (``a[i, i + 1:]`` at the last row of a
        # back substitution): still a view, not a copy to run as NumPy
        if shaped.base is None or shaped.size and not np.may_share_memory(shaped, g):
            return None
        offset = shaped.__array_interface__["data"][0] - g.__array_interface__["data"][0]
        try:
            return View(self._h.base, shaped.shape, shaped.strides, offset if shaped.size else 0)
        except ProgramError:
            return None

    def _derive(self, fn: Callable[[np.ndarray], np.ndarray]) -> "Traced":
        """Apply a NumPy view operation (slicing, reshape, transpose) to both the real data
        and the IR geometry; when NumPy copies, so does the program."""
        if self._rec.halting and self._rec.plain():
            return fn(unwrap(self))
        real = fn(self._real)
        view = self._geometry(fn)
        real_view = real.size == 0 or np.may_share_memory(real, self._r)
        if view is not None:
            if real_view:
                return Traced(self._rec, self._h, view, real)
            out = Traced.fresh(self._rec, np.array(real, copy=True))
            self._rec.emit(Instruction(Opcode.COPY, (out._v,), (view,)))
            return out
        got = as_view(self._rec, real, (self,), "a view") if real_view else None
        if got is not None:
            return got
        return opaque(self._rec, "reshape copy", lambda a: np.array(fn(a), copy=True), (self,), {})

    # -- ndarray-like attributes ---------------------------------------------------------
    ndim = property(lambda self: self._r.ndim)
    size = property(lambda self: self._r.size)
    itemsize = property(lambda self: self._r.itemsize)
    nbytes = property(lambda self: self._r.nbytes)
    T = property(lambda self: self.transpose())
    mT = property(lambda self: self.swapaxes(-1, -2))

    @property
    def shape(self) -> tuple[int, ...]:
        return self._r.shape

    @shape.setter
    def shape(self, value: Any) -> None:
        # NumPy reshapes in place when no copy is needed, and raises otherwise
        old = self._r.shape
        self._r.shape = value
        new = self._r.shape
        view = self._geometry(lambda a: a.reshape(new)) if self._v.shape == old else None
        self._rebind(view, "ndarray.shape =")

    @property
    def strides(self) -> tuple[int, ...]:
        return self._r.strides

    @strides.setter
    def strides(self, value: Any) -> None:
        self._r.strides = value
        self._rebind(view_of(self._h, self._r), "ndarray.strides =")

    @property
    def dtype(self) -> np.dtype:
        return self._r.dtype

    @dtype.setter
    def dtype(self, value: Any) -> None:
        self._r.dtype = value
        self._rebind(view_of(self._h, self._r), "ndarray.dtype =")

    def _rebind(self, view: View | None, why: str) -> None:
        """This array now means ``self._r`` (changed in place): a view of the same base
        when the IR can say so, else a base of its own sharing the memory (escaped)."""
        if self._rec.halting and self._rec.plain():
            return
        if view is not None:
            self._v = view
            return
        other = _alias(self._rec, self._r, (self,), why)
        if isinstance(other, Traced):
            self._h, self._v = other._h, other._v
        else:  # not a numeric array any more: the program cannot follow it
            self._rec.notice(NoticeKind.PLAIN, f"{why} makes an array capture cannot record")
            self._h.escape()

    @property
    def flat(self) -> Any:
        return self._real.flat if self._rec.halting and self._rec.plain() else TracedFlat(self)

    @flat.setter
    def flat(self, value: Any) -> None:
        # NumPy repeats a short value over every element: exact as ``a.reshape(-1)[...] =``
        # when the value is one element or exactly as many (a C-contiguous array only)
        target = self.flat
        target[:] = value

    @property
    def real(self) -> Any:
        if self._scalar:   # np.float64(5).real is a scalar, not a 0-d view
            return self._leave("scalar.real").real
        if self.dtype.kind != "c":
            return self._derive(lambda a: a.real)
        return as_view(self._rec, self._real.real, (self,), "ndarray.real")

    @real.setter
    def real(self, value: Any) -> None:
        target = self.real
        target[...] = value

    @property
    def imag(self) -> Any:
        if self._scalar:
            return self._leave("scalar.imag").imag
        if self.dtype.kind != "c":
            return self._real.imag  # new read-only zeros, not the array's memory
        return as_view(self._rec, self._real.imag, (self,), "ndarray.imag")

    @imag.setter
    def imag(self, value: Any) -> None:
        if self.dtype.kind != "c":
            self._r.imag = value  # NumPy's error: a real array has no imaginary part to set
            return
        target = self.imag
        target[...] = value

    def __len__(self) -> int:
        return len(self._r)

    def __repr__(self) -> str:
        return repr(self._leave("repr"))

    def __str__(self) -> str:
        return str(self._leave("str"))

    def __format__(self, spec: str) -> str:
        return format(self._leave("format"), spec)

    # values leaving the captured world
    def _leave(self, why: str) -> Any:
        if self._h.watched:
            self._h.touch()
        self._rec.sync(self._v, why)
        return unwrap(self)

    def __bool__(self) -> bool:
        return bool(self._leave("bool()"))

    def __float__(self) -> float:
        return self._rec.left_value(float(self._leave("float()")), self._v)

    def __int__(self) -> int:
        return int(self._leave("int()"))

    def __index__(self) -> int:
        return operator.index(self._leave("index"))

    def __complex__(self) -> complex:
        return self._rec.left_value(complex(self._leave("complex()")), self._v)

    def __round__(self, ndigits: Any = None) -> Any:
        return round(self._leave("round()"), ndigits) if ndigits is not None else round(self._leave("round()"))

    def __hash__(self) -> int:
        if self._scalar:  # a NumPy scalar is hashable; an array is not
            return hash(self._leave("hash()"))
        raise TypeError("unhashable type: 'numpy.ndarray'")

    def __contains__(self, value: Any) -> bool:
        return bool(np.any(self == value))

    def item(self, *args: Any) -> Any:
        value = np.asarray(self._leave("item()")).item(*args)
        return self._rec.left_value(value, self._v) if not args and self.size == 1 else value

    def tolist(self) -> Any:
        return np.asarray(self._leave("tolist()")).tolist()

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        # NumPy code outside capture gets the real memory: what it writes there is
        # reloaded into the program at the base's next use
        real = self._real
        if copy or (dtype is not None and np.dtype(dtype) != real.dtype):
            return np.array(real, dtype=dtype, copy=True)
        if not self._rec.stopped:
            self._h.escape()
        return real

    @property
    def __array_interface__(self) -> dict[str, Any]:
        # the real memory, as __array__ gives it (NumPy itself takes this road to it first)
        real = self._real
        if not self._rec.stopped:
            self._rec.notice(NoticeKind.PLAIN, "ndarray.__array_interface__ hands the array's memory to plain NumPy")
            self._h.escape()
        return real.__array_interface__

    def __copy__(self) -> "Traced":
        return self.copy()

    def __deepcopy__(self, memo: Any) -> "Traced":
        return self.copy()

    def __reduce_ex__(self, protocol: Any) -> Any:
        return self._leave("pickle").__reduce_ex__(protocol)

    def __iter__(self) -> Any:
        # raised by iter() itself, as NumPy does (``try: iter(v)`` tells scalars apart);
        # a generator would raise only at its first next()
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return _items(self)

    # -- protocols ---------------------------------------------------------------------
    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        if self._rec.halting and self._rec.plain():
            return getattr(ufunc, method)(*unwrap(inputs), **unwrap(kwargs))
        return _ufunc(self._rec, ufunc, method, inputs, kwargs)

    def __array_function__(self, func: Callable[..., Any], types: Any, args: Any, kwargs: Any) -> Any:
        from fusionlab.capture.functions import dispatch

        if self._rec.halting and self._rec.plain():
            return func(*unwrap(args), **unwrap(kwargs))
        return dispatch(self._rec, func, types, args, kwargs)

    # -- operators ---------------------------------------------------------------------
    def __getitem__(self, key: Any) -> Any:
        rec = self._rec
        if rec.halting and rec.plain():
            return unwrap(self)[unwrap(key)]
        full_int = _full_int(key, self.ndim)
        if full_int and rec.plain_lines and rec.scalar_plain():
            # a loop over elements past the threshold: plain scalars (asked first: a scalar
            # loop reads millions of elements, and the general path costs 20 us a read)
            return self._real[key]
        if _is_basic(key):
            vkey = _view_key(key)
            if full_int:  # NumPy gives a scalar copy, not a view
                return _copy_of(self._derive(lambda a: a[vkey]), scalar=True)
            return self._derive(lambda a: a[vkey])
        got = compress(self._rec, self, key) if self.ndim else None
        if got is None and self.ndim:
            got = gather(self._rec, self, key)
        if got is not None:
            return got
        return opaque(self._rec, "fancy indexing", lambda a, k: a[k], (self, key), {})

    def __setitem__(self, key: Any, value: Any) -> None:
        if self._scalar:
            raise TypeError(f"{type(unwrap(self)).__name__!r} object does not support item assignment")
        rec = self._rec
        if rec.halting and rec.plain():
            self._real[unwrap(key)] = unwrap(value)
            return
        try:
            value = operand_value(rec, value)
        except Foreign:
            plain_call(rec, "assignment of a value capture cannot record", operator.setitem, (self, key, value), {})
            return
        if _is_basic(key):
            vkey = _view_key(key)
            target = self._derive(lambda a: a[vkey])
            buffered = _overlapping_source(value, target)
            target._real[...] = unwrap(value)
            if buffered is not None and not _holds(target._real, buffered):
                # NumPy copied a 1-D view element by element from memory it was writing (no
                # temporary: ``x[:, 2] = x[1]``): the COPY the bytecode spells out reads a
                # copy first, so the program keeps what NumPy left instead
                reload_all(rec, [target])
                return
            emit_split(rec, Instruction(Opcode.COPY, (target._v,), (operand(value),)))
            return
        listed = listed_key(key, self.shape) if self.ndim else None
        if listed is not None and _assign_listed(self, listed, value):
            return
        if isinstance(key, Traced) and key.dtype == bool and key.shape == self.shape and \
                isinstance(value, Traced) and assign_selected(rec, self, key, value):
            return
        if isinstance(key, Traced) and key.dtype == bool and key.shape == self.shape and \
                _broadcasts(np.shape(unwrap(value)), self.shape):
            np.copyto(self._real, unwrap(value), where=key._real, casting="unsafe")
            emit_split(rec, Instruction(Opcode.WHERE, (self._v,), (key._v, operand(value), self._v)))
            return

        def setter(a: np.ndarray, k: Any, v: Any) -> np.ndarray:
            a = a.copy()
            a[k] = v
            return a

        result = setter(self._real, unwrap(key), unwrap(value))
        opaque(rec, "indexed assignment", setter, (self, key, value), {}, out_view=self, precomputed=result)

    # -- methods -----------------------------------------------------------------------
    # ndarray's methods take their parameters by position too (``x.var(1, None, None, 1)``
    # is ``ddof=1``, pythran's Cronbach alpha): the order of each is NumPy's
    clip = _positional(np.clip, ("a_min", "a_max", "out"))
    sum = _positional(np.sum, ("axis", "dtype", "out", "keepdims", "initial", "where"))
    prod = _positional(np.prod, ("axis", "dtype", "out", "keepdims", "initial", "where"))
    max = _positional(np.max, ("axis", "out", "keepdims", "initial", "where"))
    min = _positional(np.min, ("axis", "out", "keepdims", "initial", "where"))
    argmin = _positional(np.argmin, ("axis", "out"))
    argmax = _positional(np.argmax, ("axis", "out"))
    mean = _positional(np.mean, ("axis", "dtype", "out", "keepdims"))
    var = _positional(np.var, ("axis", "dtype", "out", "ddof", "keepdims"))
    std = _positional(np.std, ("axis", "dtype", "out", "ddof", "keepdims"))
    all = _positional(np.all, ("axis", "dtype", "out", "keepdims"))
    any = _positional(np.any, ("axis", "dtype", "out", "keepdims"))
    cumsum = _positional(np.cumsum, ("axis", "dtype", "out"))
    cumprod = _positional(np.cumprod, ("axis", "dtype", "out"))
    def dot(self, o: Any, *args: Any, **kw: Any) -> Any: return np.dot(self, o, *args, **kw)   # out=

    def byteswap(self, inplace: bool = False) -> Any:
        if not inplace:
            return opaque(self._rec, "ndarray.byteswap", lambda a: a.byteswap(), (self,), {})
        # in place it returns the array itself: the opaque call's result was taken for a
        # view of its argument and the bytes it swapped were never recorded
        self._real.byteswap(inplace=True)
        reload_all(self._rec, [self])
        return self
    def take(self, indices: Any, axis: Any = None, out: Any = None, mode: str = "raise") -> Any:
        return np.take(self, indices, axis=axis, out=out, mode=mode)

    def copy(self, order: str = "C") -> "Traced":
        return _copy_of(self)

    def astype(self, dtype: Any, order: str = "K", casting: str = "unsafe", subok: bool = True,
               copy: bool = True) -> Any:
        new = np.dtype(dtype)
        if self._rec.halting and self._rec.plain():
            return unwrap(self).astype(dtype, order, casting, subok, copy)
        if (order, casting) != ("K", "unsafe") or not recordable(new):
            return opaque(self._rec, "astype", lambda a: a.astype(dtype, order, casting, subok, copy), (self,), {})
        if not copy and new == self.dtype:
            return self
        # a NumPy scalar's astype gives a scalar (np.float64(1).astype(np.float32) is np.float32)
        return _copy_of(self, dtype=new, scalar=self._scalar)

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

    def sort(self, axis: int = -1, kind: Any = None, order: Any = None, **kw: Any) -> None:
        def sort(a: np.ndarray) -> np.ndarray:
            return np.sort(a, axis=axis, kind=kind, order=order, **kw)

        if self._rec.halting and self._rec.plain():
            self._real.sort(axis=axis, kind=kind, order=order, **kw)
            return
        result = sort(self._real)
        opaque(self._rec, "ndarray.sort", sort, (self,), {}, out_view=self, precomputed=result)

    def view(self, *args: Any, **kwargs: Any) -> Any:
        real = self._real.view(*args, **kwargs)
        if self._rec.halting and self._rec.plain():
            return real
        if type(real) is not np.ndarray:  # a subclass: plain NumPy's object, sharing memory
            self._rec.notice(NoticeKind.PLAIN, f"ndarray.view as {type(real).__name__}")
            self._h.escape()
            return real
        return as_view(self._rec, real, (self,), "ndarray.view with another dtype")

    def setflags(self, write: Any = None, align: Any = None, uic: Any = None) -> None:
        # flags are the real array's: NumPy enforces them when capture runs the operations
        self._r.setflags(write, align, uic)

    def resize(self, *new_shape: Any, refcheck: bool = True) -> None:
        """In-place resize as NumPy does it: only capture's own references are set aside
        for NumPy's reference check, so it fails exactly when plain NumPy would."""
        if self._h.watched:
            self._h.touch()
        if self._rec.halting and self._rec.plain():
            self._r.resize(*new_shape, refcheck=False)  # capture's own references hold it too
            return
        real, h = self._r, self._h
        held, h.real = h.real, None
        self._r = None  # type: ignore[assignment]
        del held
        try:
            real.resize(*new_shape, refcheck=refcheck)
        finally:
            self._r = real
            h.real = real.view() if h.real is None else h.real
        fresh = _alias(self._rec, real, (), "ndarray.resize")
        if isinstance(fresh, Traced):
            self._h, self._v = fresh._h, fresh._v

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):  # no __array_interface__: NumPy outside capture must ask __array__
            raise AttributeError(name)
        real_attr = getattr(np.ndarray, name, None)
        if real_attr is None and self._scalar:
            # a NumPy scalar's own (np.float64 is a float: is_integer, hex, as_integer_ratio):
            # its value leaves the program, as float() does
            return getattr(self._leave(f"{type(unwrap(self)).__name__}.{name}"), name)
        if real_attr is None:
            raise AttributeError(f"'numpy.ndarray' object has no attribute {name!r}")
        if name in _METADATA:
            return getattr(self._r, name)
        if name == "base":
            owner = self._h.owner() if self._h.owner is not None else None
            if owner is not None and owner is not self and self._r.base is owner._r:
                return owner   # ``y.base is x`` for y = x[1:], as in plain NumPy
        if name in _ALIASING:
            self._rec.notice(NoticeKind.PLAIN, f"ndarray.{name} hands the array's memory to plain NumPy")
            self._h.escape()
            return getattr(self._r, name)
        if self._rec.halting and self._rec.plain():
            return getattr(unwrap(self), name)
        if not callable(real_attr):
            return getattr(self._leave(f"ndarray.{name}"), name)

        def method(*args: Any, **kwargs: Any) -> Any:
            return opaque(self._rec, f"ndarray.{name}", lambda a, *r, **k: getattr(a, name)(*r, **k),
                           (self,) + args, kwargs)

        return method


class TracedFlat:
    """``a.flat`` of a traced array.

    For a C-contiguous ``a``, ``a.flat[i]`` and ``a.flat[start:stop:step]`` are the 1-D view
    ``a.reshape(-1)[key]`` of its memory: a read is NumPy's copy of that view, a write goes
    through it (when the value is one element, or exactly as many as the view, NumPy's
    repetition of a shorter value being then a broadcast), and both are recorded exactly.
    Any other use (another index kind, a non-contiguous ``a``, iteration, ``np.asarray(a.flat)``,
    a value NumPy would repeat or cut) gets NumPy's own ``flatiter`` on the real memory, with
    a notice: the base escapes and is reloaded where it is next used, as before.

    >>> from fusionlab.capture import capture
    >>> c = capture("import numpy as np\\na = np.zeros((3, 3))\\na.flat[::4] = 1.0\\nd = a.flat[::4]\\n")
    >>> [i.opcode.name for i in c.batches[0].instructions][:3]
    ['COPY', 'COPY', 'COPY']
    >>> c.replay()["d"], [n.message for n in c.notices]
    (array([1., 1., 1.]), [])
    """

    __slots__ = ("_a", "_it")

    def __init__(self, a: Traced) -> None:
        self._a, self._it = a, None

    def _line(self, key: Any) -> "Traced | None":
        """``a.reshape(-1)[key]`` when ``key`` is a slice or an integer of a C-contiguous array."""
        a = self._a
        if a._scalar or not a._r.flags.c_contiguous or isinstance(key, (bool, np.bool_)) \
                or not isinstance(key, (slice, int, np.integer)):
            return None
        return a.reshape(-1)

    def _plain(self) -> Any:
        """NumPy's flatiter on the real memory (the base escapes: see the class notes)."""
        if self._it is None:
            a = self._a
            a._rec.notice(NoticeKind.PLAIN, "ndarray.flat hands the array's memory to plain NumPy")
            a._h.escape()
            self._it = a._r.flat
        return self._it

    def __getitem__(self, key: Any) -> Any:
        line = self._line(key)
        if line is None:
            return self._plain()[unwrap(key)]
        if isinstance(key, slice):   # NumPy's flatiter copies a slice
            return _copy_of(line[key])
        return line[key]

    def __setitem__(self, key: Any, value: Any) -> None:
        line = self._line(key)
        shape = np.shape(unwrap(value)) if not isinstance(value, Traced) else value.shape
        count = int(np.prod(shape))
        wanted = len(range(*key.indices(line.size))) if line is not None and isinstance(key, slice) else 1
        if line is None or len(shape) > 1 or (count != 1 and count != wanted) or \
                not isinstance(key, slice) and shape:
            self._plain()[unwrap(key)] = unwrap(value)
            return
        line[key] = value

    @property
    def real(self) -> Any:
        """NumPy's flatiter of the real array (the one already handed out, if any), for the
        user's namespace after the capture."""
        return self._it if self._it is not None else self._a._r.flat

    def __iter__(self) -> Any:
        return iter(self._plain())

    def __next__(self) -> Any:
        return next(self._plain())

    def __len__(self) -> int:
        return len(self._plain())

    def __array__(self, *args: Any, **kwargs: Any) -> np.ndarray:
        return self._plain().__array__(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:   # base, coords, index, copy, ...
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self._plain(), name)


# --------------------------------------------------------------------------- operators


def _subclass(o: Any) -> bool:
    return isinstance(o, np.ndarray) and type(o) is not np.ndarray


def _binary(ufunc: np.ufunc, op: Callable[[Any, Any], Any], reflected: bool = False) -> Callable[..., Any]:
    """A binary operator through the ufunc (so NumPy's rules and ``__array_ufunc__``
    apply); with an ndarray subclass, NumPy's own operator decides (``matrix * a``
    multiplies matrices)."""

    def f(self: Traced, o: Any) -> Any:
        if self._rec.halting and self._rec.plain():  # past the budget: NumPy's own operator
            return op(unwrap(o), unwrap(self)) if reflected else op(unwrap(self), unwrap(o))
        if _subclass(o):
            return plain_call(self._rec, f"{op.__name__} with {type(o).__name__}",
                               lambda a, b: op(b, a) if reflected else op(a, b), (self, o), {})
        if reflected:
            return _scalar_math(ufunc(o, self), self, o, lambda a, b: op(b, a))
        return _scalar_math(_power(self, o) if ufunc is np.power else ufunc(self, o), self, o, op)

    return f


def _scalar_math(result: Any, a: Traced, b: Any, op: Callable[..., Any]) -> Any:
    """``result`` of an operator on NumPy scalars (``a``, and ``b`` unless ``op`` is unary),
    holding what NumPy's own operator gives: NumPy's scalar math (``abs(s)``, ``s * t`` on
    the scalar a reduction returns) is not its ufunc loop, and for complex magnitudes and
    products the two differ in the last bit (``abs`` of 7,056 of 20,000 random complex64;
    pythran's train_eq amplified one such bit to 2.5e-07). The instruction recorded is the
    ufunc's; the error model allows the difference (``NOT_ROUNDED_ULPS``)."""
    # (a plain NumPy scalar ``result``: a loop over elements past the threshold)
    if not ((isinstance(result, Traced) and result._scalar or isinstance(result, np.generic)) and a._scalar and (
            b is _UNARY or isinstance(b, Traced) and b._scalar
            or isinstance(b, (int, float, complex, np.generic)))):
        return result
    try:
        with np.errstate(all="ignore"):   # its warnings were the ufunc's, shown once
            value = op(unwrap(a)) if b is _UNARY else op(unwrap(a), unwrap(b))
    except Exception:   # NumPy's scalar math refusing what its ufunc took: keep the ufunc's
        return result
    if isinstance(value, np.generic) and value.dtype == result.dtype:
        if isinstance(result, np.generic):
            return value
        result._r[...] = value
    return result


#: the second operand of a unary operator (see :func:`_scalar_math`)
_UNARY = object()


def _power(a: Traced, exponent: Any, **kw: Any) -> Any:
    """``a ** exponent`` as NumPy's operator computes it (see :func:`_scalar_power`)."""
    fast = _scalar_power(a, exponent)
    return np.power(a, exponent, **kw) if fast is np.power else fast(a, **kw)


def _scalar_power(a: Traced, exponent: Any) -> Callable[..., Any]:
    """The ufunc NumPy's ``a ** exponent`` calls: its ``fast_scalar_power`` (numpy/_core/src/
    multiarray/number.c) sends a float or complex array raised to the Python int -1 or 2, or
    to the Python float 0.5, to ``reciprocal``, ``square`` or ``sqrt`` — not ``power``. For
    complex arrays these differ from ``np.power`` in the last bit (2,910 of 10,000 random
    ``z ** 2``), and an iteration such as ``z = z ** 2 + c`` amplifies that.
    For float arrays the two give the same bits (checked in tests/test_capture_idioms.py), and
    capture keeps POWER there, as the paper's bytecode (Bohrium's ``BH_POWER``) writes it.

    >>> import numpy as np
    >>> from fusionlab.capture import capture
    >>> c = capture("import numpy as np\\nz = np.ones(3, complex)\\nw = z ** 2\\nv = z ** 2.0\\n")
    >>> [i.opcode.name for i in c.batches[0].instructions if i.opcode.name in ("SQUARE", "POWER")]
    ['SQUARE', 'POWER']
    """
    if a.dtype.kind != "c":
        return np.power
    if type(exponent) is int:
        return {-1: np.reciprocal, 2: np.square}.get(exponent, np.power)
    return np.sqrt if type(exponent) is float and exponent == 0.5 else np.power


def _inplace(ufunc: np.ufunc, op: Callable[[Any, Any], Any]) -> Callable[..., Any]:
    def f(self: Traced, o: Any) -> Any:
        if self._rec.halting and self._rec.plain():  # past the budget: NumPy's own operator, in place
            result = op(unwrap(self), unwrap(o))
            return result if self._scalar or result is not self._r else self
        if self._scalar:  # a NumPy scalar is immutable: ``s += v`` binds a new one
            return _scalar_math(ufunc(self, o), self, o, op)
        if _subclass(o):
            plain_call(self._rec, f"{op.__name__} with {type(o).__name__}", op, (self, o), {})
            return self
        if ufunc is np.power:  # ``a **= e`` takes NumPy's fast path too
            return _power(self, o, out=(self,))
        return ufunc(self, o, out=(self,))

    return f


for _name, _uf, _op in [
    ("add", np.add, operator.add), ("sub", np.subtract, operator.sub), ("mul", np.multiply, operator.mul),
    ("truediv", np.true_divide, operator.truediv), ("floordiv", np.floor_divide, operator.floordiv),
    ("mod", np.remainder, operator.mod), ("pow", np.power, operator.pow), ("and", np.bitwise_and, operator.and_),
    ("or", np.bitwise_or, operator.or_), ("xor", np.bitwise_xor, operator.xor),
    ("lshift", np.left_shift, operator.lshift), ("rshift", np.right_shift, operator.rshift),
    ("matmul", np.matmul, operator.matmul),
]:
    setattr(Traced, f"__{_name}__", _binary(_uf, _op))
    setattr(Traced, f"__r{_name}__", _binary(_uf, _op, reflected=True))
    iop = getattr(operator, f"i{_name}")
    setattr(Traced, f"__i{_name}__", _inplace(_uf, iop))
for _name, _uf, _op in [
    ("lt", np.less, operator.lt), ("le", np.less_equal, operator.le), ("gt", np.greater, operator.gt),
    ("ge", np.greater_equal, operator.ge), ("eq", np.equal, operator.eq), ("ne", np.not_equal, operator.ne),
]:
    setattr(Traced, f"__{_name}__", _binary(_uf, _op))
for _name, _uf, _op in [("neg", np.negative, operator.neg), ("pos", np.positive, operator.pos),
                        ("abs", np.absolute, operator.abs), ("invert", np.invert, operator.invert)]:
    setattr(Traced, f"__{_name}__", (lambda uf, op: lambda self: _scalar_math(uf(self), self, _UNARY, op))(_uf, _op))
Traced.__divmod__ = lambda self, o: np.divmod(self, o)  # type: ignore[attr-defined]
Traced.__rdivmod__ = lambda self, o: np.divmod(o, self)  # type: ignore[attr-defined]


# --------------------------------------------------------------------------- helpers


def _full_int(key: Any, ndim: int) -> bool:
    """Whether ``key`` is one integer per dimension (NumPy then gives a scalar, not a view);
    ``bool`` is not an integer index."""
    if isinstance(key, tuple):
        if len(key) != ndim:
            return False
        for k in key:   # a loop, not all(): this runs for every element a scalar loop reads
            if type(k) is not int and (not isinstance(k, (int, np.integer)) or isinstance(k, bool)):
                return False
        return True
    return ndim == 1 and isinstance(key, (int, np.integer)) and not isinstance(key, bool)


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


def _broadcasts(shape: tuple[int, ...], to: tuple[int, ...]) -> bool:
    return len(shape) <= len(to) and all(a == b or a == 1 for a, b in zip(reversed(shape), reversed(to)))


def lift(rec: Recorder, x: Any) -> Any:
    """A traced array for a real one (its data become a program input); others unchanged."""
    if type(x) is np.ndarray and x.ndim > 0 and recordable(x.dtype):
        h = rec.input_base(x)
        return Traced(rec, h, h.full, x)
    return x


def operand_value(rec: Recorder, x: Any) -> Any:
    """``x`` as an operand: traced arrays and numeric scalars as they are, real arrays
    (and lists of numbers) lifted as inputs; raises :class:`Foreign` for anything else."""
    if isinstance(x, Traced):
        return x
    if isinstance(x, (bool, int, float, complex)):
        return x
    if isinstance(x, (list, tuple)):
        x = np.asarray(unwrap(x))
    if (type(x) is np.ndarray or isinstance(x, np.generic)) and recordable(x.dtype):
        return x if x.ndim == 0 else lift(rec, x)
    raise Foreign(type(x).__name__)


def operand(x: Any) -> View | Literal:
    """The IR operand of a (lifted) traced array or a scalar."""
    if isinstance(x, Traced):
        return x._v
    if isinstance(x, (np.ndarray, np.generic)) and not recordable(x.dtype):
        raise Foreign(f"{x.dtype} scalar")
    if isinstance(x, np.ndarray):  # 0-d
        return Literal(x.item())
    if isinstance(x, (bool, int, float, complex, np.generic)):
        return Literal(x.item() if isinstance(x, np.generic) else x)
    raise Foreign(type(x).__name__)


def _overlapping_source(value: Any, target: "Traced") -> np.ndarray | None:
    """A copy of ``value`` when it is a view overlapping ``target`` (not the same view):
    what a buffered assignment would write."""
    if isinstance(value, Traced) and isinstance(value._v, View) and value._v != target._v \
            and value._v.overlaps(target._v):
        return np.array(value._real, copy=True)
    return None


def _holds(real: np.ndarray, buffered: np.ndarray) -> bool:
    """Whether ``real`` holds ``buffered`` broadcast and cast as an assignment does."""
    want = np.broadcast_to(buffered, real.shape).astype(real.dtype)
    return bool(np.array_equal(real, want, equal_nan=real.dtype.kind in "fc"))


def emit_split(rec: Recorder, ins: Instruction) -> None:
    """Emit ``ins``; inputs overlapping its output without being identical are first
    copied (NumPy buffers such overlaps itself; the bytecode spells the copy out, Def. 11)."""
    if _plainly_valid(ins):
        rec.emit(ins, checked=True)
        return
    try:
        check_instruction(ins)
    except ProgramError:
        pass
    else:
        rec.emit(ins, checked=True)
        return
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


def _plainly_valid(ins: Instruction) -> bool:
    """Whether ``ins`` is, at a glance, an instruction :func:`check_instruction` accepts: an
    element-wise one with its arity, no attributes, and every input view of the output's
    shape on another base or the output itself (no overlap to split). A sufficient
    condition only (``False`` sends the instruction to the full check): most recorded
    instructions pass it for a fraction of the full check's cost, which the program's own
    validation repeats at the end of capture anyway."""
    if ins.attrs or len(ins.outputs) != 1 or ins.opcode not in OpFamily.ELEMENTWISE:
        return False
    arity = OPCODES[ins.opcode].arity
    if arity is not None and len(ins.inputs) != arity:
        return False
    out = ins.outputs[0]
    return all(not isinstance(x, View) or x.shape == out.shape and (x.base.name != out.base.name or x == out)
               for x in ins.inputs)


def compress(rec: Recorder, data: Traced, mask: Any) -> Traced | None:
    """``data[mask]`` for a bool mask of ``data``'s shape (elements) or of its leading
    extents (rows: ``points[labels == j]``, also ``x[m, :]`` and ``x[m, 1]``), recorded as
    COMPRESS (its output sized by the count NumPy selects now); ``None`` when the key is
    something else (the caller then records other fancy indexing as OPAQUE).

    >>> from fusionlab.capture import capture
    >>> c = capture("import numpy as np\\nx = np.arange(-2.0, 3.0)\\ns = x[x > 0].sum()\\n")
    >>> [ins.opcode.name for ins in c.program if ins.opcode.name not in ("DEL", "SYNC")]
    ['RANGE', 'GREATER', 'COMPRESS', 'ADD_REDUCE']
    >>> float(c.namespace["s"])
    3.0
    >>> c = capture("import numpy as np\\nx = np.arange(6.0).reshape(3, 2)\\nr = x[x[:, 0] > 0].sum(axis=0)\\n")
    >>> [ins.opcode.name for ins in c.program if ins.opcode.name not in ("DEL", "SYNC")]
    ['RANGE', 'GREATER', 'COMPRESS', 'ADD_REDUCE']
    >>> c.namespace["r"].tolist()
    [6.0, 8.0]
    """
    got = _row_key(data, mask)
    if got is None:
        return None
    mask, rest = got
    mask = lift(rec, mask) if isinstance(mask, np.ndarray) else mask
    if not isinstance(mask, Traced):
        return None
    if rest:   # x[m, 1] is x[:, 1][m]: the basic part first (a view), then the selection
        vkey = (slice(None),) * mask.ndim + rest
        data = data._derive(lambda a: a[vkey])
    real = data._real[mask._real]
    out = Traced.fresh(rec, real)
    emit_split(rec, Instruction(Opcode.COMPRESS, (out._v,), (data._v, mask._v)))
    return out


def _row_key(data: Traced, key: Any) -> "tuple[Any, tuple[Any, ...]] | None":
    """A bool mask over ``data``'s first axes and the basic rest of ``key`` (ints, slices,
    ``...``) that selects after it, or ``None`` for any other key."""
    items = key if isinstance(key, tuple) else (key,)
    if not items:
        return None
    mask, rest = items[0], tuple(items[1:])
    if isinstance(mask, list):
        mask = np.asarray(unwrap(mask))
    if not (isinstance(mask, Traced) or type(mask) is np.ndarray) or mask.dtype != bool or \
            not 1 <= mask.ndim <= data.ndim or tuple(mask.shape) != tuple(data.shape[:mask.ndim]):
        return None
    if rest and (any(k is None for k in rest) or not _is_basic(rest)
                 or sum(1 for k in rest if k is not Ellipsis) > data.ndim - mask.ndim
                 or sum(1 for k in rest if k is Ellipsis) > 1):
        return None
    if all(isinstance(k, slice) and k == slice(None) or k is Ellipsis for k in rest):
        rest = ()
    return mask, rest


def assign_selected(rec: Recorder, target: Traced, mask: Traced, value: Traced) -> bool:
    """``target[mask] = value`` where ``value`` was computed by maps from selections
    ``b[mask]``: recorded as those maps on whole arrays and one WHERE (see
    :mod:`.masked`), so it fuses; ``False`` (nothing done) for any other value.

    >>> from fusionlab.capture import capture
    >>> c = capture("import numpy as np\\nx = np.arange(-2.0, 3.0)\\nlow = x < 0\\nx[low] = -x[low]\\n")
    >>> [ins.opcode.name for ins in c.program if ins.opcode.name not in ("DEL", "SYNC")]
    ['RANGE', 'LESS', 'NEGATIVE', 'WHERE']
    >>> c.namespace["x"].tolist()
    [2.0, 1.0, 0.0, 1.0, 2.0]
    """
    unsafe = frozenset(name for name, h in list(rec.handles.items()) if h.escaped)
    got = expand_selection(rec.current, value._v, mask._v, unsafe)
    if got is None:
        return False
    expression, dead = got
    target._real[mask._real] = value._real  # NumPy's own assignment: its errors are the user's
    superseded = [rec.current[j] for j in dead]
    keep: list[Traced] = []  # the whole-array maps live until the WHERE has read them
    whole = _emit_expansion(rec, expression, keep)
    emit_split(rec, Instruction(Opcode.WHERE, (target._v,), (mask._v, whole, target._v)))
    rec.supersede(superseded)
    del keep
    return True


def _emit_expansion(rec: Recorder, node: "Expansion | View", keep: list[Traced]) -> View:
    if isinstance(node, View):
        return node
    inputs = tuple(x if isinstance(x, Literal) else _emit_expansion(rec, x, keep) for x in node.inputs)
    out = Traced.fresh(rec, np.empty(node.shape, dtype=node.dtype))
    keep.append(out)
    emit_split(rec, Instruction(node.opcode, (out._v,), inputs, node.attrs))
    return out._v


def gather(rec: Recorder, src: Traced, key: Any, c_order: bool = False) -> Traced | None:
    """``src[key]`` for one block of integer index arrays between slices and ``...``
    (``x[i]``, ``m[i, j]``, ``m[:, j]``, ``img[..., order]``, ``m[1:, j, ::2]``), recorded as
    GATHER; ``None`` for any other key (the caller records it as OPAQUE). NumPy indexes
    first: an index out of range raises its IndexError here, in the user's cell, and the
    program only ever holds valid indices (docs/filters-gathers-histograms.md, "Gathers"). The result has
    NumPy's strides for ``src[key]``; ``c_order`` makes it C-contiguous (``np.take``'s).

    >>> from fusionlab.capture import capture
    >>> c = capture("import numpy as np\\nx = np.arange(5.0) * 2\\ny = x[np.array([4, -1, 0])] + 1\\n")
    >>> [ins.opcode.name for ins in c.program if ins.opcode.name not in ("DEL", "SYNC")]
    ['RANGE', 'MULTIPLY', 'GATHER', 'ADD']
    >>> c.namespace["y"].tolist()
    [9.0, 9.0, 1.0]
    >>> c = capture("import numpy as np\\nm = np.arange(6.0).reshape(2, 3)\\ne = m[:, [0, -1]] * 10\\n")
    >>> [ins.opcode.name for ins in c.program if ins.opcode.name not in ("DEL", "SYNC")]
    ['RANGE', 'GATHER', 'MULTIPLY']
    >>> c.namespace["e"].tolist()
    [[0.0, 20.0], [30.0, 50.0]]
    """
    form = gather_form(key, src.ndim)
    if form is None:
        return None
    basic, lead, keys = form
    real = src._real[tuple(unwrap(k) if isinstance(k, Traced) else k for k in _with_indices(basic, lead, keys))]
    sliced = src if all(k == slice(None) for k in basic) else src._derive(lambda a: a[basic])
    views = [(lift(rec, k) if isinstance(k, np.ndarray) else k) for k in keys]
    if not isinstance(sliced, Traced) or not all(isinstance(v, Traced) for v in views):
        return None
    rest = sliced.ndim - lead - len(keys)
    # each index broadcasts against the output's indexed axes: unit axes for the trailing
    # untouched ones (NumPy puts one block of adjacent indexed axes in its place)
    views = [v._derive(lambda a: a[(Ellipsis,) + (None,) * rest]) if rest else v for v in views]
    if not all(isinstance(v, Traced) for v in views):
        return None
    out = Traced.fresh(rec, real) if c_order else _laid_out(rec, real, lead, real.ndim - rest - lead)
    attrs = (("axis", lead),) if lead else ()
    emit_split(rec, Instruction(Opcode.GATHER, (out._v,), (sliced._v,) + tuple(v._v for v in views), attrs))
    return out


def gather_form(key: Any, ndim: int) -> tuple[tuple[slice, ...], int, list[Any]] | None:
    """``key`` as (a basic key of slices, the number of axes before the index arrays, the
    index arrays) when it is one block of integer index arrays with only slices and at most
    one ``...`` around it; ``None`` otherwise (ints, ``None``, bool masks, separated index
    arrays: NumPy's other rules).

    >>> gather_form((slice(None), [0, -1]), 2)
    ((slice(None, None, None), slice(None, None, None)), 1, [array([ 0, -1])])
    >>> gather_form((Ellipsis, np.array([1]), slice(1, None)), 3)[:2]
    ((slice(None, None, None), slice(None, None, None), slice(1, None, None)), 1)
    >>> gather_form(([0], slice(None), [1]), 2) is None   # separated: NumPy puts them first
    True
    >>> gather_form((slice(None), [[0], [1, 2]]), 2) is None   # ragged: NumPy's error
    True
    """
    items = list(key) if isinstance(key, tuple) else [key]
    kinds = [_index_kind(k) for k in items]
    where = [j for j, kind in enumerate(kinds) if kind == "index"]
    if None in kinds or kinds.count("...") > 1 or not where or where != list(range(where[0], where[-1] + 1)):
        return None
    try:
        keys = [np.asarray(unwrap(k)) if isinstance(k, list) else k for k in items[where[0]:where[-1] + 1]]
    except ValueError:
        return None   # a ragged list: NumPy's own error, from the OPAQUE call
    if not all(k.ndim >= 1 and k.dtype.kind in "iu" for k in keys):
        return None
    named = len(items) - kinds.count("...")
    if named > ndim:
        return None   # NumPy's own IndexError (too many indices), from the OPAQUE call
    whole = [slice(None)] * (ndim - named)
    basic: list[slice] = []
    for item, kind in zip(items, kinds):
        basic += whole if kind == "..." else [slice(None) if kind == "index" else item]
    basic += whole if "..." not in kinds else []
    lead = sum(ndim - named if kind == "..." else 1 for kind in kinds[:where[0]])
    return tuple(basic), lead, keys


def _index_kind(k: Any) -> str | None:
    """What a key item is to :func:`gather_form`: "slice", "...", "index" (an array or list
    that may hold integers) or ``None`` (anything else)."""
    if k is Ellipsis:
        return "..."
    if isinstance(k, slice):
        ok = all(x is None or isinstance(x, (int, np.integer)) and not isinstance(x, bool)
                 for x in (k.start, k.stop, k.step))
        return "slice" if ok else None
    if isinstance(k, (Traced, list)) or type(k) is np.ndarray:
        return "index"
    return None


def _laid_out(rec: Recorder, real: np.ndarray, lead: int, b: int) -> Traced:
    """A fresh result with ``real``'s strides: with ``lead`` axes before the ``b`` indexed
    ones NumPy returns a transposed view of a buffer whose indexed axes come first (not
    C-contiguous; users can see it), so the program does too."""
    if lead:
        order = tuple(range(lead, lead + b)) + tuple(range(lead)) + tuple(range(lead + b, real.ndim))
        back = tuple(int(j) for j in np.argsort(order))
        buf = np.empty(tuple(real.shape[j] for j in order), dtype=real.dtype)
        if buf.transpose(back).strides == real.strides:
            buf.transpose(back)[...] = real
            return Traced.fresh(rec, buf)._derive(lambda a: a.transpose(back))
    return Traced.fresh(rec, real)


def _with_indices(basic: tuple[slice, ...], lead: int, keys: list[Any]) -> tuple[Any, ...]:
    """The basic key with the index arrays back in their place: what NumPy is given."""
    return basic[:lead] + tuple(keys) + basic[lead + len(keys):]


def _assign_listed(target: Traced, listed: ListedKey, value: Any) -> bool:
    """Record ``target[key] = value`` for a key of constant listed indices as one COPY per
    index (:mod:`.scatter`); ``False`` (nothing done) when ``value`` does not broadcast to
    the indexed shape, so NumPy's own error comes from the indexed assignment."""
    rec, ndim = target._rec, target.ndim
    indexed = tuple(len(listed.indices) if a == listed.axis else n for a, n in enumerate(target.shape))
    vshape = np.shape(unwrap(value))
    if not _broadcasts(vshape, indexed):
        return False
    if isinstance(value, Traced) and np.may_share_memory(value._real, target._real):
        value = _copy_of(value)   # NumPy reads the whole value before the first write
    for k in range(len(listed.indices)):
        row = target._derive(lambda a, key=listed.row_key(k, ndim): a[key])
        vkey = listed.value_key(k, vshape, len(indexed)) if isinstance(value, Traced) else None
        part = value if vkey is None else value._derive(lambda a, key=vkey: a[key])
        row._real[...] = unwrap(part)
        emit_split(rec, Instruction(Opcode.COPY, (row._v,), (operand(part),)))
    return True


def _copy_of(x: Traced, dtype: Any = None, scalar: bool = False) -> Any:
    if dtype is not None and not recordable(dtype):   # np.array(x, dtype=np.longdouble)
        real = opaque(x._rec, "a copy", lambda a: np.array(a, dtype=dtype, copy=True), (x,), {})
        return real[()] if scalar and isinstance(real, np.ndarray) else real
    real = np.array(x._real, dtype=dtype, copy=True)
    if x._rec.halting and x._rec.plain():
        return real[()] if scalar else real
    out = Traced.fresh(x._rec, real, scalar=scalar)
    x._rec.emit(Instruction(Opcode.COPY, (out._v,), (x._v,)))
    return out


def array_copy(x: Traced, dtype: Any = None) -> Traced:
    """``np.array(x, dtype)``: a fresh array copied from ``x``; a NumPy scalar becomes a 0-d
    array, as ``np.array(np.float64(1.5))`` does."""
    return _copy_of(x, dtype=dtype, scalar=False)


def _result(rec: Recorder, real: Any, out: Traced | None) -> Traced:
    """Wrap a ufunc's real result: into ``out`` when given, else a fresh base."""
    if out is not None:
        return out
    scalar = not isinstance(real, np.ndarray)
    return Traced.fresh(rec, np.asarray(real), scalar=scalar)


# --------------------------------------------------------------------------- views and aliases


def view_of(h: Handle, real: np.ndarray) -> View | None:
    """The IR view of ``h``'s base that ``real`` (an array into its memory) is, or ``None``
    when the bytecode cannot say it: another dtype, a byte offset or stride that is not a
    whole element, or a writeable view that visits an element twice."""
    mem = h.real
    if mem is None or real.dtype != h.base.np_dtype or mem.dtype != real.dtype or not mem.flags.c_contiguous:
        return None
    item = real.itemsize
    if real.size == 0:
        return View(h.base, real.shape, (0,) * real.ndim, 0)
    offset = real.__array_interface__["data"][0] - mem.__array_interface__["data"][0]
    if offset % item or any(s % item for s in real.strides):
        return None
    try:
        view = View(h.base, real.shape, tuple(s // item for s in real.strides), offset // item)
    except ProgramError:
        return None
    if real.flags.writeable and view.as_index() is None and view.size > 1:
        idx = view.indices() if view.size <= 1 << 20 else None
        if idx is None or np.unique(idx).size != idx.size:
            return None
    return view


def as_view(rec: Recorder, real: Any, sources: tuple[Any, ...], why: str) -> Any:
    """``real``, a NumPy result that may share memory with traced ``sources``: a traced
    view of a source's base when the IR can describe it, else an escaped alias (see
    :func:`_alias`); a fresh traced array when it shares nothing (its values recorded)."""
    if rec.stopped:
        return real
    for t in sources:
        if isinstance(t, Traced) and isinstance(real, np.ndarray) and t._h.real is not None and \
                np.may_share_memory(real, t._h.real):
            view = view_of(t._h, real) if type(real) is np.ndarray else None
            if view is not None:
                return Traced(rec, t._h, view, real)
            return _alias(rec, real, tuple(s for s in sources if isinstance(s, Traced)), why)
    return None


def _alias(rec: Recorder, real: np.ndarray, sources: tuple[Traced, ...], why: str) -> Any:
    """An array sharing memory with ``sources`` in a way the bytecode cannot describe: a
    base of its own (its contents recorded), and every base involved escaped, so each is
    reloaded when the others changed it. Non-numeric or subclass arrays stay plain NumPy."""
    for t in sources:
        t._h.escape()
    if not traceable(real) or real.ndim == 0:
        rec.notice(NoticeKind.PLAIN, why)
        return real
    rec.notice(NoticeKind.ALIAS, why)
    h = rec.input_base(real)
    h.escaped, h.belief = True, rec.inputs[h.base.name]
    return Traced(rec, h, h.full, real)


def plain_call(rec: Recorder, why: str, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Run ``fn`` as plain NumPy on the real data, outside the program: the traced
    arguments are escaped first, so whatever ``fn`` writes is reloaded at their next use."""
    if rec.halting and rec.plain():
        return fn(*unwrap(args), **unwrap(kwargs))
    traced = [a for a in _flatten((args, kwargs)) if isinstance(a, Traced)]
    for t in traced:
        t._h.escape()
    rec.notice(NoticeKind.PLAIN, why)
    return fn(*unwrap(args), **unwrap(kwargs))


# --------------------------------------------------------------------------- ufuncs


def _ufunc(rec: Recorder, ufunc: np.ufunc, method: str, inputs: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    out_arg = kwargs.get("out")
    outs = out_arg if isinstance(out_arg, tuple) else ((out_arg,) if out_arg is not None else ())
    if any(not isinstance(x, Traced) and (isinstance(x, np.ndarray) and not traceable(x)
           or hasattr(type(x), "__array_ufunc__") and not isinstance(x, (np.ndarray, np.generic)))
           for x in inputs + outs) or any(isinstance(o, np.ndarray) and not isinstance(o, Traced) for o in outs):
        # (an ``out=`` capture does not trace, a function default's ``into += x``: NumPy
        # returns that very array, and the user may test ``r is into``)
        return _ufunc_plain(rec, ufunc, method, inputs, kwargs)
    if ufunc is np.matmul and method == "__call__" and not kwargs and len(inputs) == 2:
        from fusionlab.capture.contract import contraction   # it builds on this module

        try:
            got = contraction(rec, "matmul", *inputs)
        except Exception:   # the general path below raises NumPy's own error
            got = None
        if got is not None:
            return got
    extra = set(kwargs) - {"out"}
    opcode = opcode_of_ufunc(ufunc.__name__, method)   # the table's: None when no opcode is this call
    if method == "__call__" and opcode is not None and ufunc.nout == 1 and not extra and len(outs) <= 1 and \
            all(isinstance(o, Traced) for o in outs):
        if not outs and rec.plain_lines and all(not isinstance(x, Traced) or x._scalar for x in inputs) \
                and rec.scalar_plain():
            return ufunc(*unwrap(inputs))  # a loop over elements past the threshold
        try:
            lifted = [operand_value(rec, x) for x in inputs]
            operands = tuple(operand(x) for x in lifted)
        except Foreign:
            return _ufunc_plain(rec, ufunc, method, inputs, kwargs)
        out = outs[0] if outs else None
        real = call_as_user(ufunc, *unwrap(lifted), **({"out": out._real} if out is not None else {}))
        if out is None and not traceable(real):
            return real
        result = _result(rec, real, out)
        emit_split(rec, Instruction(opcode, (result._v,), operands))
        return result
    if method in ("reduce", "accumulate") and not outs and set(kwargs) <= {"axis", "dtype"} and \
            opcode is not None and isinstance(inputs[0], Traced) \
            and len(inputs) == 1:
        got = _reduction(rec, opcode, ufunc, method, inputs[0], kwargs.get("axis", 0), kwargs.get("dtype"))
        if got is not None:
            return got
    if method == "at" and ufunc in (np.add, np.subtract) and not kwargs and _ufunc_at(ufunc, inputs):
        return None   # ufunc.at returns None, as NumPy's
    if method == "reduceat" and ufunc is np.add and set(kwargs) <= {"axis"} and kwargs.get("axis", 0) == 0:
        got = _add_reduceat(inputs)
        if got is not None:
            return got
    if method == "outer" and len(inputs) == 2 and not kwargs and ufunc.nin == 2 \
            and opcode_of_ufunc(ufunc.__name__, "__call__") is not None:
        # ufunc.outer(a, b) is ufunc(a with b.ndim new trailing axes, b): one broadcast map
        a, b = inputs
        try:
            shape = np.shape(unwrap(a)) + (1,) * np.ndim(unwrap(b))
            return ufunc(a.reshape(shape) if isinstance(a, Traced) else np.reshape(np.asarray(a), shape), b)
        except Exception:   # the opaque call below raises NumPy's own error
            pass
    name = f"np.{ufunc.__name__}" + ("" if method == "__call__" else f".{method}")
    return opaque(rec, name, lambda *a, **k: getattr(ufunc, method)(*a, **k), inputs, kwargs)


def _ufunc_at(ufunc: np.ufunc, inputs: tuple[Any, ...]) -> bool:
    """``np.add.at(a, idx, b)`` (and ``np.subtract.at``) as a histogram added in place:
    ``a += np.bincount(idx, weights=b, minlength=len(a))``, a BINCOUNT and an ADD the graph
    fuses (docs/filters-gathers-histograms.md, "Scatter-adds"). For a 1-D ``a`` of numbers,
    one integer index array (any shape, its values in ``[-len(a), len(a))``: a negative one
    counts from the end, as NumPy's) and ``b`` a scalar or an array that broadcasts to the
    index's shape. Repeated indices all add, as NumPy's: the sum of their ``b`` (in index
    order) is added once, which rounds like NumPy's one-at-a-time sum to the error model's
    tolerance. ``False`` (nothing recorded) otherwise: the caller records the call opaque."""
    if len(inputs) not in (2, 3) or not isinstance(inputs[0], Traced):
        return False
    a, idx = inputs[0], inputs[1]
    b = inputs[2] if len(inputs) == 3 else 1
    real_idx = np.asarray(unwrap(idx))
    if a.ndim != 1 or a.dtype.kind not in "iuf" or real_idx.dtype.kind not in "iu" or real_idx.ndim == 0 \
            or not real_idx.size:
        return False
    n = a.shape[0]
    if real_idx.min() < -n or real_idx.max() >= n:
        return False   # NumPy raises its IndexError (the opaque call)
    real_b = np.asarray(unwrap(b))
    try:
        np.broadcast_to(real_b, real_idx.shape)
    except ValueError:
        return False
    if real_b.dtype.kind not in "biuf" or (a.dtype.kind in "iu" and real_b.dtype.kind == "f"):
        return False   # NumPy's casting (a float added into an int array) stays NumPy's
    # what the user's array holds afterwards is NumPy's own answer, to the last bit (the
    # recorded histogram sums a repeated index's values first: the run differs by rounding)
    numpy_says = np.array(a._real, copy=True)
    getattr(ufunc, "at")(numpy_says, real_idx, real_b)
    if not isinstance(idx, Traced):   # a list or an ndarray of indices: a program input
        idx = lift(a._rec, real_idx if type(real_idx) is np.ndarray else np.array(real_idx))
        if not isinstance(idx, Traced):
            return False
    flat = idx.ravel()
    if real_idx.min() < 0:   # from the end, as NumPy counts
        flat = np.where(flat < 0, flat + n, flat)
    if real_b.ndim == 0 and not isinstance(b, Traced):
        counts = np.bincount(flat, minlength=n)
        step = counts * real_b.item() if real_b.item() != 1 else counts
    else:
        weights = (b + np.zeros(real_idx.shape, dtype=np.result_type(real_b.dtype, np.float64))).ravel()
        step = np.bincount(flat, weights=weights, minlength=n)
    if step.dtype != a.dtype:
        step = step.astype(a.dtype)
    if ufunc is np.add:
        a += step
    else:
        a -= step
    a._real[...] = numpy_says
    return True


def _add_reduceat(inputs: tuple[Any, ...]) -> Any:
    """``np.add.reduceat(x, idx)`` of a 1-D ``x`` at increasing indices ``idx`` known at
    capture (a list or an array the program does not compute), from 0: the sums of the segments
    ``x[idx[k]:idx[k + 1]]`` (the last to the end), as a BINCOUNT of each element's segment
    (a constant input) weighted by ``x``. ``None`` (the caller records the call opaque)
    otherwise: indices that repeat or go back (NumPy then returns single elements), a first
    index above 0, dtypes whose sum NumPy rounds otherwise (float32, complex)."""
    if len(inputs) != 2 or not isinstance(inputs[0], Traced) or isinstance(inputs[1], Traced):
        return None
    x = inputs[0]
    idx = np.asarray(inputs[1])
    if x.ndim != 1 or x.dtype.kind not in "iuf" or x.dtype.kind == "f" and x.dtype != np.float64 \
            or idx.ndim != 1 or not idx.size or idx.dtype.kind not in "iu":
        return None
    n = x.shape[0]
    if idx[0] != 0 or np.any(np.diff(idx) <= 0) or idx[-1] >= n:
        return None
    segment = np.repeat(np.arange(idx.size, dtype=np.int64), np.diff(np.append(idx, n)))
    seg = lift(x._rec, segment)
    numpy_says = np.add.reduceat(x._real, idx)
    sums = np.bincount(seg, weights=x if x.dtype == np.float64 else x.astype(np.float64), minlength=idx.size)
    if sums.dtype != numpy_says.dtype:
        sums = sums.astype(numpy_says.dtype)
    sums._real[...] = numpy_says   # the user's value is NumPy's to the last bit (the run: to rounding)
    return sums


def _ufunc_plain(rec: Recorder, ufunc: np.ufunc, method: str, inputs: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """A ufunc with an operand capture cannot describe: plain NumPy's answer (``out=``
    arrays that are traced get their result back as themselves, as NumPy returns them)."""
    result = plain_call(rec, f"np.{ufunc.__name__} of {', '.join(type(x).__name__ for x in inputs)}",
                         getattr(ufunc, method), inputs, kwargs)
    out_arg = kwargs.get("out")
    outs = out_arg if isinstance(out_arg, tuple) else ((out_arg,) if out_arg is not None else ())
    if len(outs) == 1 and isinstance(outs[0], Traced) and result is outs[0]._r:
        return outs[0]
    return result


def _reduction(rec: Recorder, opcode: Opcode, ufunc: np.ufunc, method: str, src: Traced, axis: Any,
               dtype: Any) -> Traced | None:
    if not (isinstance(axis, (int, np.integer)) or axis is None):
        return None
    if dtype is not None and np.dtype(dtype) != src.dtype:
        if not recordable(dtype):
            return None
        src = _copy_of(src, dtype=np.dtype(dtype))
    # dtype= also when it is the input's own: np.add.reduce of int8 gives int64 without it
    real = getattr(ufunc, method)(src._real, axis=axis, **({} if dtype is None else {"dtype": np.dtype(dtype)}))
    result = _result(rec, real, None)
    ax = None if axis is None else int(axis) % max(src.ndim, 1)
    if method == "reduce" and src.ndim == 1:
        ax = None  # one axis: the whole array, and the same element order
    rec.emit(Instruction(opcode, (result._v,), (src._v,), {"axis": ax}))
    return result


def arg_reduction(rec: Recorder, opcode: Opcode, src: Traced, axis: Any) -> Traced | None:
    """``np.argmin``/``np.argmax`` of ``src`` along ``axis`` (an int, or None: the
    flattened array) recorded as ``opcode``, or ``None`` where capture leaves it to NumPy:
    an empty input (NumPy raises ValueError), complex values (ordered lexicographically,
    which no kernel computes), an axis that is not an int.

    >>> from fusionlab.capture import capture
    >>> c = capture("import numpy as np\\nx = np.arange(6.0).reshape(2, 3)\\ni = (-x).argmin(axis=1)\\n")
    >>> [i.opcode.name for i in c.program if i.opcode.name in ("ARGMIN_REDUCE", "OPAQUE")]
    ['ARGMIN_REDUCE']
    >>> c.namespace["i"].tolist()
    [2, 2]
    """
    if isinstance(axis, bool) or not (isinstance(axis, (int, np.integer)) or axis is None) or src.size == 0 \
            or src.dtype.kind not in "biuf":
        return None
    if axis is not None and not -src.ndim <= axis < src.ndim:
        return None   # NumPy's own AxisError, from the plain call
    real = OPCODES[opcode].numpy(src._real, axis=axis)
    result = _result(rec, np.asarray(real, dtype=np.int64) if isinstance(real, np.ndarray) else np.int64(real), None)
    ax = None if axis is None or src.ndim <= 1 else int(axis) % src.ndim
    rec.emit(Instruction(opcode, (result._v,), (src._v,), {"axis": ax}))
    return result


# --------------------------------------------------------------------------- opaque calls


def opaque(
    rec: Recorder,
    name: str,
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    out_view: Traced | None = None,
    precomputed: Any = None,
) -> Any:
    """Run ``fn`` with real NumPy and record it as one OPAQUE instruction.

    Traced arguments become the instruction's inputs; the function replays the call with
    the values the executor passes in. A result that is a view of a traced argument is
    recorded as that view (or an escaped alias); results that are not one array leave the
    captured world (their inputs are synced), and traced arguments a call may have written
    in place (it returned ``None``, or they were its ``out=``) are reloaded."""
    if rec.halting and rec.plain():
        return fn(*unwrap(args), **unwrap(kwargs))
    args, kwargs = _lift_deep(rec, args), _lift_deep(rec, kwargs)
    traced = [a for a in _flatten((args, kwargs)) if isinstance(a, Traced)]
    took = None
    if precomputed is None:
        started = time.perf_counter()
        real = fn(*unwrap(args), **unwrap(kwargs))
        took = time.perf_counter() - started
    else:
        real = precomputed
    written = [t for t in _flatten(kwargs.get("out", ())) if isinstance(t, Traced)]
    if out_view is None:
        if isinstance(real, np.ndarray) and any(real is t._r for t in written):
            out_view = next(t for t in written if real is t._r)
            written = [t for t in written if t is not out_view]
        else:
            # the argument itself handed back (np.nan_to_num(x, copy=False) is x), else a view
            viewed = next((t for t in traced if real is t._r), None)
            viewed = as_view(rec, real, tuple(traced), name) if viewed is None else viewed
            if viewed is not None:
                if kwargs.get("copy") is False or kwargs.get("inplace") is True:
                    # it handed back its argument changed in place (np.nan_to_num(x, copy=False))
                    reload_all(rec, [t for t in traced if t._h.real is not None
                                     and np.may_share_memory(real, t._h.real)])
                return viewed
            if not traceable(real):
                if real is None:
                    written = traced
                else:
                    arrays = [x for x in _flatten(real) if isinstance(x, np.ndarray)]
                    odd = next((x.dtype for x in arrays if x.dtype.kind in NUMERIC and not recordable(x.dtype)), None)
                    if odd is not None:
                        rec.notice(NoticeKind.PLAIN, f"{name} gives {odd} values (extended precision or "
                                                     "byte-swapped), which capture does not record")
                    for t in traced:
                        rec.sync(t._v, name)
                        if t._h.real is not None and any(np.may_share_memory(x, t._h.real) for x in arrays):
                            t._h.escape()  # a plain view of the base (np.split): later writes reach it
                reload_all(rec, written)
                return real
    rec.notice(NoticeKind.OPAQUE, f"{name}")
    key = rec.next_key()

    # the replay keeps the call's shape, not the traced arrays (they must be free to die)
    template = _template((args, kwargs))

    def replay(*values: Any) -> Any:
        a, k = _replace(template, iter(values))
        return fn(*a, **k)

    rec.externals.functions[key] = replay
    if took is not None:
        rec.externals.seconds[key] = took
    if out_view is not None:
        if precomputed is not None:
            out_view._real[...] = real
        result = out_view
    else:
        result = Traced.fresh(rec, np.asarray(real), scalar=not isinstance(real, np.ndarray))
    emit_split(rec, Instruction(Opcode.OPAQUE, (result._v,), tuple(t._v for t in traced), {"name": name, "key": key}))
    reload_all(rec, written)
    return result


def reload_all(rec: Recorder, arrays: list[Traced]) -> None:
    """Record the current contents of bases a call may have written in place."""
    done: set[str] = set()
    for t in arrays:
        h = t._h
        if h.base.name not in done and h.real is not None:
            done.add(h.base.name)
            rec.reload(h, np.array(h.real, copy=True))


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
