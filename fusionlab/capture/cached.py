"""Calls of cached functions (``functools.lru_cache``, ``functools.cache``) run plainly.

A cache keeps what the function returned; under capture that would be a traced stand-in,
and the cache is C's: no walk over the user's objects after the cell can reach its
entries to hand back the ndarray. So a call of a cached function from captured code runs
as plain NumPy: its arguments are handed over as real objects, and for the time of the
call the names its code (and the same module's functions it calls) reads from its
globals see the real ``numpy`` and real arrays instead of capture's stand-ins. The cache
then holds exactly what plain NumPy would put there, a cache hit returns the very object
a plain run returns, and an unhashable argument (an array) raises NumPy's own
``TypeError``. What it returns enters the recorded program as an input.

Examples
--------
>>> import functools, numpy as np
>>> from fusionlab.capture import capture
>>> ns = {"np": np, "functools": functools}
>>> exec("@functools.lru_cache\\ndef grid(n):\\n    return np.linspace(0, 1, n)", ns)
>>> cap = capture("g = grid(4)\\nh = g * 2\\n", ns)
>>> type(grid_value := ns["grid"](4)).__name__, grid_value is ns["g"]
('ndarray', True)
>>> ns["h"].tolist()
[0.0, 0.6666666666666666, 1.3333333333333333, 2.0]
"""

from __future__ import annotations

import functools
import types
from typing import Any, Callable, Iterator

from fusionlab.capture.array import Traced, hand_out
from fusionlab.capture.functions import GeneratorProxy, Proxy, Recording

__all__ = ["is_cached", "call_plainly"]

#: the type of what ``functools.lru_cache`` and ``functools.cache`` make (C's wrapper)
CACHE_WRAPPER: type = type(functools.lru_cache(maxsize=None)(len))
#: how many functions' code :func:`names_read` follows from the cached one
_GAS = 256


def is_cached(fn: Any) -> bool:
    """Whether ``fn`` is a cached function, or a method made from one.

    Examples
    --------
    >>> import functools
    >>> is_cached(functools.cache(abs)), is_cached(abs)
    (True, False)
    """
    if isinstance(fn, types.MethodType):
        fn = fn.__func__
    return isinstance(fn, CACHE_WRAPPER)


def names_read(fn: Callable[..., Any], globals_: dict[str, Any]) -> set[str]:
    """Global names the code of ``fn`` reads, and of the functions of the same globals it
    names, transitively (at most ``_GAS`` functions: a huge module is not walked whole).

    Examples
    --------
    >>> g = {}
    >>> exec("def a():\\n    return b() + x\\ndef b():\\n    return y", g)
    >>> sorted(names_read(g["a"], g))
    ['b', 'x', 'y']
    """
    names: set[str] = set()
    seen: set[int] = set()
    todo = [fn]
    gas = _GAS
    while todo and gas > 0:
        f = todo.pop()
        f = getattr(f, "__wrapped__", f)
        code = getattr(f, "__code__", None)
        if not isinstance(code, types.CodeType) or id(code) in seen:
            continue
        gas -= 1
        seen.add(id(code))
        for name in _code_names(code):
            names.add(name)
            value = globals_.get(name)
            if getattr(value, "__globals__", None) is globals_ or isinstance(value, CACHE_WRAPPER):
                todo.append(value)
    return names


def _code_names(code: types.CodeType) -> Iterator[str]:
    yield from code.co_names
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _code_names(const)


def _real(value: Any) -> Any:
    """The plain object for one of capture's stand-ins (``None`` for anything else)."""
    if isinstance(value, Proxy):
        return value.real_module
    if isinstance(value, (Recording, GeneratorProxy)):
        return value.real
    if isinstance(value, Traced):
        return hand_out(value)   # marks the base escaped: what the call writes is reloaded
    return None


def call_plainly(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``fn(*args, **kwargs)`` as plain NumPy runs it (see the module's docstring).

    The globals are restored afterwards, except a name the call itself rebound
    (``global``): that keeps what the call gave it, as it would in a plain run.
    """
    target = fn.__func__ if isinstance(fn, types.MethodType) else fn
    inner = getattr(target, "__wrapped__", None)
    globals_ = getattr(inner, "__globals__", None)
    swapped: dict[str, tuple[Any, Any]] = {}
    if isinstance(globals_, dict):
        for name in names_read(inner, globals_):
            if name in globals_:
                real = _real(globals_[name])
                if real is not None:
                    swapped[name] = (globals_[name], real)
                    globals_[name] = real
    try:
        return fn(*(hand_out(a) for a in args), **{k: hand_out(v) for k, v in kwargs.items()})
    finally:
        for name, (stand_in, real) in swapped.items():
            if globals_.get(name) is real:
                globals_[name] = stand_in
