"""After a capture: every object the user holds made exactly what plain NumPy gives.

Capture's stand-ins (traced arrays, the ``numpy`` proxy, recording functions and
generators) may have been stored anywhere the user's code put them: in variables, lists of
lists, dicts, sets, tuples, dataclass and other instances of the user's classes, class
attributes, closures and default arguments of functions defined in the cell,
``functools.partial`` objects and the locals of suspended generators. :func:`plain`
replaces each in place (mutable containers keep their identity; tuples are rebuilt) with
the real object: the ndarray (or NumPy scalar) the traced array stands for, the real
module, function or ``numpy.random.Generator``.

Examples
--------
>>> import numpy as np
>>> from fusionlab.capture import capture
>>> cap = capture("import numpy as np\\nrng = np.random.default_rng(0)\\npairs = [[np.ones(2)]]\\n")
>>> type(cap.namespace["rng"]).__name__, type(cap.namespace["pairs"][0][0]).__name__
('Generator', 'ndarray')
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import functools
import sys
import types
import weakref
from collections import deque
from typing import Any, Callable

import numpy as np

_ATOMIC = (type(None), bool, int, float, complex, str, bytes, np.ndarray, np.generic, type(Ellipsis), range, slice)
#: NumPy's own classes written in Python that keep the arrays they are built from
_NUMPY_HOLDERS = (np.vectorize, np.poly1d, np.polynomial.Polynomial, np.polynomial.Chebyshev, np.polynomial.Legendre,
                  np.polynomial.Hermite, np.polynomial.HermiteE, np.polynomial.Laguerre)
_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class written in Python


class Plainer:
    """Walks objects replacing stand-ins; ``convert(x)`` gives the real object for a
    stand-in or ``None``. Objects are visited once (cycles are fine); at most ``limit``
    objects are visited, so a huge namespace cannot stall the end of a cell."""

    def __init__(self, convert: Callable[[Any], Any], user_modules: set[str], user_globals: list[dict[str, Any]],
                 limit: int = 2_000_000) -> None:
        self.convert, self.user_modules, self.limit = convert, user_modules, limit
        self.user_globals = [id(g) for g in user_globals]
        self.memo: dict[int, Any] = {}
        self.visited = 0

    def __call__(self, x: Any) -> Any:
        if isinstance(x, np.ndarray) and x.dtype.kind == "O" and id(x) not in self.memo:
            self.memo[id(x)] = x
            self._objects(x)
            return x
        if isinstance(x, _ATOMIC):
            return x
        key = id(x)
        if key in self.memo:
            return self.memo[key]
        real = self.convert(x)
        if real is not None:
            self.memo[key] = real
            return real
        self.visited += 1
        if self.visited > self.limit:
            return x
        self.memo[key] = x  # before the walk: a cycle comes back to the object itself
        new = self._walk(x)
        self.memo[key] = new
        return new

    def _walk(self, x: Any) -> Any:
        if isinstance(x, list):
            for i, y in enumerate(x):
                z = self(y)
                if z is not y:
                    x[i] = z
            return x
        if isinstance(x, dict):
            self._dict(x)
            return x
        if isinstance(x, (set, frozenset)):
            items = [self(y) for y in x]
            if all(a is b for a, b in zip(items, x)):
                return x
            if isinstance(x, frozenset):
                return type(x)(items)
            x.clear()
            x.update(items)
            return x
        if isinstance(x, tuple):
            items = [self(y) for y in x]
            if all(a is b for a, b in zip(items, x)):
                return x
            return x._make(items) if hasattr(x, "_make") else (tuple(items) if type(x) is tuple else type(x)(items))
        if isinstance(x, deque):
            for i, y in enumerate(list(x)):
                z = self(y)
                if z is not y:
                    x[i] = z
            return x
        if isinstance(x, types.FunctionType):
            self._function(x)
            return x
        if isinstance(x, types.MethodType):
            self(x.__self__)
            return x
        if isinstance(x, functools.partial):
            self._partial(x)
            return x
        if type(x) is weakref.ref:
            # a weak reference to a stand-in dies with it: to the real object instead
            target = x()
            real = None if target is None else self(target)
            return x if real is None or real is target else weakref.ref(real, x.__callback__)
        if isinstance(x, types.GeneratorType) and x.gi_code.co_name == "_items" and x.gi_frame is not None \
                and str(x.gi_frame.f_globals.get("__name__")).startswith(__package__ or "-"):
            return self._array_iterator(x)
        if isinstance(x, (types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType)):
            frame = getattr(x, "gi_frame", None) or getattr(x, "cr_frame", None) or getattr(x, "ag_frame", None)
            # the user's generators, and capture's own (iterating over a traced array)
            if frame is not None and (id(frame.f_globals) in self.user_globals
                                      or str(frame.f_globals.get("__name__", "")).startswith(__package__ or "-")):
                self._frame(frame)
            return x
        if type(x).__module__ == "builtins" and hasattr(type(x), "__next__"):
            # zip, map, enumerate, a list's iterator: what they iterate over is changed
            # in place (a list, a generator's frame); their own state is C's
            with contextlib.suppress(TypeError, AttributeError, ValueError):  # no __reduce__
                for y in x.__reduce__()[1]:
                    self(y)
            return x
        if isinstance(x, _NUMPY_HOLDERS):   # NumPy's Python classes keeping the arrays they are given
            # into the instance's dict: poly1d's properties refuse to be set
            self._attributes(x, dict(vars(x)), lambda obj, name, v: vars(obj).__setitem__(name, v))
            return x
        if isinstance(x, type):
            if x.__module__ in self.user_modules:
                self._attributes(x, dict(vars(x)), type.__setattr__)
            return x
        if isinstance(x, types.SimpleNamespace) or type(x).__flags__ & _HEAPTYPE and (
            type(x).__module__ in self.user_modules or dataclasses.is_dataclass(x)
        ):
            self._instance(x)
        return x

    def _array_iterator(self, g: types.GeneratorType) -> Any:
        """``iter(x)`` of a traced array (a generator of capture's): plain NumPy's iterator
        over the real array, at the same position (``iter(rows)`` kept with one row taken
        was a ``generator`` in the user's session, an ``iterator`` in plain NumPy's)."""
        local = g.gi_frame.f_locals
        real = self(local.get("a"))
        # the generator itself too: a holder that cannot be changed (a zip's C state) keeps it
        self._frame(g.gi_frame)
        if not isinstance(real, np.ndarray) or real.ndim == 0:
            return g
        it = iter(real)
        for _ in range(local["i"] + 1 if "i" in local else 0):   # no ``i`` yet: not started
            next(it, None)
        return it

    def _objects(self, a: np.ndarray) -> None:
        """The items of an object array (``obj[1] = x * 2`` stored the traced array itself)."""
        for i, y in enumerate(a.flat):
            if self.visited > self.limit:
                return
            z = self(y)
            if z is not y and a.flags.writeable:
                a[np.unravel_index(i, a.shape)] = z   # a whole index: the object stored, not broadcast

    def _dict(self, d: dict[Any, Any]) -> None:
        changed_keys = False
        for k, v in list(d.items()):
            w = self(v)
            if w is not v:
                d[k] = w
            if not isinstance(k, _ATOMIC) and self(k) is not k:
                changed_keys = True
        if changed_keys:  # a traced scalar as a key: rebuild in the same order
            items = [(self(k), v) for k, v in d.items()]
            d.clear()
            d.update(items)

    def _function(self, f: types.FunctionType) -> None:
        if id(f.__globals__) not in self.user_globals and f.__module__ not in self.user_modules:
            return
        for cell in f.__closure__ or ():
            try:
                v = cell.cell_contents
            except ValueError:  # an empty cell (a variable not assigned yet)
                continue
            w = self(v)
            if w is not v:
                cell.cell_contents = w
        if f.__defaults__:
            f.__defaults__ = self(f.__defaults__)
        if f.__kwdefaults__:
            self._dict(f.__kwdefaults__)
        self._dict(f.__dict__)

    def _partial(self, p: functools.partial) -> None:
        func, args, keywords = self(p.func), self(p.args), dict(p.keywords)
        self._dict(keywords)
        if func is not p.func or args is not p.args or any(keywords[k] is not v for k, v in p.keywords.items()):
            p.__setstate__((func, args, keywords, p.__dict__ or None))

    def _frame(self, frame: types.FrameType) -> None:
        """The locals of a generator the cell left suspended (``next(g)`` in a later cell
        resumes it with them): written back into the frame's fast locals."""
        local = frame.f_locals
        changed = {k: w for k, v in list(local.items()) if (w := self(v)) is not v}
        if not changed:
            return
        for k, w in changed.items():
            local[k] = w   # Python 3.13+: f_locals writes through (PEP 667)
        if sys.version_info < (3, 13):
            ctypes.pythonapi.PyFrame_LocalsToFast(ctypes.py_object(frame), ctypes.c_int(0))

    def _instance(self, x: Any) -> None:
        attrs = dict(getattr(x, "__dict__", {}))
        for cls in type(x).__mro__:
            for name in getattr(cls, "__slots__", ()):
                if name not in ("__dict__", "__weakref__") and hasattr(x, name):
                    attrs[name] = getattr(x, name)
        self._attributes(x, attrs, object.__setattr__)

    def _attributes(self, x: Any, attrs: dict[str, Any], setter: Callable[[Any, str, Any], None]) -> None:
        for name, v in attrs.items():
            if name.startswith("__") and name.endswith("__"):
                continue
            w = self(v)
            if w is not v:
                setter(x, name, w)
