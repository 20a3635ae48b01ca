"""NumPy functions under capture: ``__array_function__`` dispatch, and the ``numpy`` proxy
module that user code imports (creation functions and ``np.random`` need it: they take no
array argument for NumPy's protocols to see)."""

from __future__ import annotations

import types
from typing import Any, Callable

import numpy as np

from ..bytecode import Instruction, Literal, Opcode
from .array import Traced, _emit, _opaque, _operand, lift, unwrap
from .recorder import Recorder


def _reduce(rec: Recorder, ufunc: np.ufunc, a: Any, axis: Any, like: Callable[..., Any]) -> Any:
    """A reduction recorded as cast-if-needed then ``ufunc.reduce``; the dtype follows
    what ``like`` (np.sum, np.prod, ...) gives for ``a``'s dtype."""
    dtype = like(np.zeros(1, dtype=a.dtype)).dtype
    return ufunc.reduce(a, axis=axis, dtype=dtype if dtype != a.dtype else None)


def _sum(rec: Recorder, a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False, **kw: Any) -> Any:
    if out is not None or keepdims or kw or dtype is not None or isinstance(axis, tuple):
        return None
    return _reduce(rec, np.add, a, axis, np.sum)


def _prod(rec: Recorder, a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False, **kw: Any) -> Any:
    if out is not None or keepdims or kw or dtype is not None or isinstance(axis, tuple):
        return None
    return _reduce(rec, np.multiply, a, axis, np.prod)


def _extreme(ufunc: np.ufunc) -> Callable[..., Any]:
    def f(rec: Recorder, a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, **kw: Any) -> Any:
        if out is not None or keepdims or kw or isinstance(axis, tuple) or a.size == 0:
            return None
        return ufunc.reduce(a, axis=axis)

    return f


def _logical(ufunc: np.ufunc) -> Callable[..., Any]:
    def f(rec: Recorder, a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, **kw: Any) -> Any:
        if out is not None or keepdims or kw or isinstance(axis, tuple):
            return None
        src = a if a.dtype == bool else a.astype(bool)
        return ufunc.reduce(src, axis=axis)

    return f


def _mean(rec: Recorder, a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False, **kw: Any) -> Any:
    if out is not None or keepdims or kw or dtype is not None or isinstance(axis, tuple):
        return None
    count = a.size if axis is None else a.shape[axis]
    src = a if a.dtype.kind in "fc" else a.astype(np.float64)
    return np.true_divide(np.add.reduce(src, axis=axis), count)


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
    real = np.where(*unwrap(ops))
    out = Traced.fresh(rec, real)
    shapes = [np.shape(unwrap(v)) for v in ops]
    if any(len(s) > real.ndim for s in shapes):
        return None
    _emit(rec, Instruction(Opcode.WHERE, (out._v,), tuple(_operand(v) for v in ops)))
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


def _filled(rec: Recorder, real: np.ndarray, value: Any) -> Traced:
    """A fresh array filled with ``value`` (None: uninitialised, as np.empty)."""
    if value is not None:
        real[...] = value
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


_TABLE: dict[Callable[..., Any], Callable[..., Any]] = {
    np.sum: _sum,
    np.prod: _prod,
    np.max: _extreme(np.maximum),
    np.amax: _extreme(np.maximum),
    np.min: _extreme(np.minimum),
    np.amin: _extreme(np.minimum),
    np.all: _logical(np.logical_and),
    np.any: _logical(np.logical_or),
    np.mean: _mean,
    np.cumsum: _scan(np.add),
    np.cumprod: _scan(np.multiply),
    np.where: _where,
    np.copy: _copy,
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


def dispatch(rec: Recorder, func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``__array_function__``: record ``func`` if we know it, else run it as OPAQUE."""
    if func in _NO_DATA:
        return func(*unwrap(args), **unwrap(kwargs))
    handler = _TABLE.get(func)
    if handler is not None:
        try:
            got = handler(rec, *args, **kwargs)
        except TypeError:
            got = None
        if got is not None:
            return got
    module = (getattr(func, "__module__", None) or "numpy").replace("numpy", "np", 1)
    if module.startswith("np.") and module.count(".") == 1 and module.endswith(("_core", "core")) or module.startswith("np._"):
        module = "np"
    name = f"{module}.{getattr(func, '__name__', 'function')}"
    return _opaque(rec, name, func, args, kwargs)


# --------------------------------------------------------------------------- the proxy


class _Proxy(types.ModuleType):
    """A module that looks up everything on a real one, with some names overridden."""

    def __init__(self, name: str, real: types.ModuleType, overrides: dict[str, Any]) -> None:
        super().__init__(name)
        self.__dict__.update(overrides)
        self._real = real

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    def __dir__(self) -> list[str]:
        return sorted(set(dir(self._real)) | set(self.__dict__))


def make_numpy(rec: Recorder) -> types.ModuleType:
    """The ``numpy`` that captured code sees."""

    def creator(fill: Any) -> Callable[..., Any]:
        real_fn = {0: np.zeros, 1: np.ones, None: np.empty}[fill]

        def f(shape: Any, dtype: Any = float, order: str = "C", **kw: Any) -> Any:
            if kw:
                return real_fn(shape, dtype, order, **kw)
            return _filled(rec, real_fn(shape, dtype=dtype), fill)

        f.__name__ = real_fn.__name__
        return f

    def full(shape: Any, fill_value: Any, dtype: Any = None, order: str = "C", **kw: Any) -> Any:
        if kw or isinstance(fill_value, (Traced, np.ndarray)):
            return _lift_result(rec, np.full(shape, unwrap(fill_value), dtype, order, **kw))
        return _filled(rec, np.full(shape, fill_value, dtype=dtype), fill_value)

    def arange(*args: Any, dtype: Any = None, **kw: Any) -> Any:
        real = np.arange(*unwrap(args), dtype=dtype, **kw)
        if kw or any(isinstance(a, Traced) for a in args) or real.size < 2:
            return _lift_result(rec, real)
        start, step = real[0].item(), (real[1] - real[0]).item()
        out = Traced.fresh(rec, real)
        attrs = {} if (start, step) == (0, 1) else {"start": start, "step": step}
        rec.emit(Instruction(Opcode.RANGE, (out._v,), (), attrs))
        return out

    def linspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, retstep: bool = False,
                 dtype: Any = None, axis: int = 0) -> Any:
        real = np.linspace(unwrap(start), unwrap(stop), num, endpoint, retstep, dtype, axis)
        if retstep or isinstance(start, Traced) or isinstance(stop, Traced) or np.ndim(real) != 1 or num < 2:
            return _lift_result(rec, real) if not retstep else real
        step = (stop - start) / ((num - 1) if endpoint else num)
        out = Traced.fresh(rec, real)
        rec.emit(Instruction(Opcode.RANGE, (out._v,), (), {"start": float(start), "step": float(step)}))
        return out

    def array(obj: Any, dtype: Any = None, *args: Any, copy: Any = True, **kw: Any) -> Any:
        if isinstance(obj, Traced):
            if args or kw:
                return _opaque(rec, "np.array", np.array, (obj, dtype) + args, kw)
            return obj.astype(dtype or obj.dtype) if copy is not False else obj
        return _lift_result(rec, np.array(unwrap(obj), dtype, *args, copy=copy, **kw))

    def asarray(obj: Any, dtype: Any = None, *args: Any, **kw: Any) -> Any:
        return np.asarray(unwrap(obj) if not isinstance(obj, Traced) else obj, dtype, *args, **kw)

    overrides = {
        "zeros": creator(0), "ones": creator(1), "empty": creator(None), "full": full,
        "arange": arange, "linspace": linspace, "array": array, "asarray": asarray,
        "random": make_random(rec),
    }
    return _Proxy("numpy", np, overrides)


def _lift_result(rec: Recorder, real: Any) -> Any:
    return lift(rec, real) if isinstance(real, np.ndarray) else real


def _random_array(rec: Recorder, what: str, real: Any) -> Any:
    """Record a random array as RANDOM with its values kept for re-execution."""
    if not isinstance(real, np.ndarray) or real.ndim == 0:
        return real
    key = rec.next_key()
    rec.externals.arrays[key] = real.copy()
    out = Traced.fresh(rec, real)
    rec.emit(Instruction(Opcode.RANDOM, (out._v,), (), {"key": key, "name": what}))
    return out


class _GeneratorProxy:
    """A ``numpy.random.Generator`` whose array results are recorded as RANDOM."""

    def __init__(self, rec: Recorder, real: np.random.Generator, label: str) -> None:
        self._rec, self._real, self._label = rec, real, label

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._real, name)
        if not callable(attr):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            return _random_array(self._rec, f"{self._label}.{name}", attr(*unwrap(args), **unwrap(kwargs)))

        return call


def make_random(rec: Recorder) -> types.ModuleType:
    """``numpy.random`` under capture: the same generators and streams as plain NumPy."""
    real = np.random

    def default_rng(seed: Any = None) -> _GeneratorProxy:
        return _GeneratorProxy(rec, real.default_rng(unwrap(seed)), f"default_rng({seed!r})")

    overrides: dict[str, Any] = {"default_rng": default_rng}
    for name in ("random", "rand", "randn", "uniform", "normal", "random_sample", "randint", "standard_normal",
                 "exponential", "poisson", "integers", "choice", "permutation"):
        fn = getattr(real, name, None)
        if fn is None:
            continue

        def make(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
            def call(*args: Any, **kwargs: Any) -> Any:
                return _random_array(rec, f"np.random.{name}", fn(*unwrap(args), **unwrap(kwargs)))

            call.__name__ = name
            return call

        overrides[name] = make(fn, name)
    return _Proxy("numpy.random", real, overrides)
