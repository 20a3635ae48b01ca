"""Comparing what fusionlab computed with what plain NumPy computes: one place for
``fusionlab verify``, ``fusionlab run --check`` and the tests.

The oracle is the program's source run plainly (:func:`plain_namespace`), never
fusionlab's own replay: a capture that records something else than the program does
(an ignored ``strides`` assignment, say) replays consistently and is still wrong.

Values are compared structurally (:func:`compare_values`):

- arrays and NumPy or Python scalars: the same shape and dtype kind, then integers and
  booleans exactly, floating and complex values within a tolerance (:func:`tolerance`),
  NaN where the other has NaN;
- dicts, lists, tuples and dataclasses: the same type, keys or length, then element by
  element; a ``numpy.random.Generator`` (or ``RandomState``) by its bit generator's state;
- functions, classes and modules are not data: skipped, with the reason;
- any other object by ``==`` when that gives a truth value, else by its attributes
  (``__dict__``), else skipped with the reason — never reported as an infinite error.

Tolerances come from what fusion may change: the order of a reduction's additions
(kernels reassociate sums so they vectorise, and split them per thread) and the math
library (NumPy's SIMD ``exp``/``sin`` against LLVM's, a few units in the last place apart).
Summing ``n`` terms in another order moves the result by at most about ``n * eps *
sum(|terms|)``, so the relative tolerance is ``(ULPS + n) * eps`` of the dtype and the
absolute one that times the largest magnitude in the compared array (the summands of a
reduction are rarely larger than the values around them; a sum that cancels to nearly
zero is held to the magnitude of its neighbours, not to its own). When the program has a
reduction (``terms > 1``), that magnitude is at least the largest among all of the
program's arrays (:func:`array_scale`): a gradient ``X.T @ (p - y)`` near convergence is a
cancelled sum of terms as large as ``X``, and its few-ulp reorderings are of their size.

Where the program is known (a capture: ``run --check``, ``verify``), each value it produced
is held instead to its own bound, propagated through the bytecode by the error model
(:mod:`fusionlab.runtime.errors`, :func:`program_bounds`, ``check_namespace(..., bounds=)``,
:func:`compare_bounded`); the tolerance above remains for values without one. Bools and
integers that differ only where an operand was within its bound of a threshold are listed
in ``CheckReport.at_threshold``, not as mismatches.

Examples
--------
>>> import numpy as np
>>> compare_values({"a": np.ones(3), "n": 3}, {"a": np.ones(3), "n": 3}).ok
True
>>> r = compare_values([np.zeros(2)], [np.array([0.0, 1.0])])
>>> r.ok, r.mismatches[0].path, r.mismatches[0].max_abs_error
(False, 'value[0]', 1.0)
>>> g = np.random.default_rng(0)
>>> compare_values(np.random.default_rng(0), g).ok
True
>>> r = compare_values({"f": print}, {"f": print})
>>> r.ok, r.skipped[0].reason
(True, 'a function is not data')
>>> tol = tolerance(np.float32, terms=1000)
>>> tol.rtol == (ULPS + 1000) * float(np.finfo(np.float32).eps)
True
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import inspect
import io
import math
import re
import sys
import sysconfig
import types
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

import numpy as np

from fusionlab.runtime.draws import GlobalDraws, global_draws
from fusionlab.runtime.errors import ULPS   # units in the last place allowed a math function (one constant for both)

__all__ = ["Tolerance", "Mismatch", "Skipped", "CheckReport", "tolerance", "compare_values", "check_namespace",
           "plain_namespace", "lookup", "reduction_terms", "ULPS", "compare_bounded", "program_bounds"]


@dataclass(frozen=True)
class Tolerance:
    """``|got - want| <= atol + rtol * |want|``, with why."""

    rtol: float
    atol: float
    why: str


def tolerance(dtype: Any, terms: int = 1, magnitude: float = 0.0) -> Tolerance:
    """The tolerance for values of ``dtype`` that may come from sums of ``terms`` terms in
    another order, in an array whose largest magnitude is ``magnitude``."""
    dt = np.dtype(dtype)
    if dt.kind not in "fc":
        return Tolerance(0.0, 0.0, f"{dt.name} is compared exactly")
    eps = float(np.finfo(dt).eps)
    terms = max(1, int(terms))
    rtol = (ULPS + terms) * eps
    return Tolerance(rtol, rtol * magnitude,
                     f"{ULPS} ulp for math functions + {terms} terms reordered, eps({dt.name})={eps:.3g}, "
                     f"scaled by the largest magnitude {magnitude:.3g}")


@dataclass(frozen=True)
class Mismatch:
    """A value that differs: where, why, and by how much (None: not a numeric difference)."""

    path: str
    reason: str
    max_abs_error: float | None = None
    max_rel_error: float | None = None

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


@dataclass(frozen=True)
class Skipped:
    """A value not compared, and why."""

    path: str
    reason: str

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


@dataclass
class CheckReport:
    """What a comparison found: mismatches, skipped values, and how many leaves matched."""

    compared: int = 0
    mismatches: list[Mismatch] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    #: the largest absolute difference among compared floating values (0.0 if none)
    max_abs_error: float = 0.0
    #: values whose bools or integers differ only where the error model says an operand was
    #: within its bound of a threshold (a comparison, a cast to an integer): legitimate
    at_threshold: list[Skipped] = field(default_factory=list)
    #: (id(got), id(want)) of the objects compared attribute by attribute so far: an object
    #: graph is walked once, not once per path to each of its nodes (nor round its cycles)
    visited: set[tuple[int, int]] = field(default_factory=set, repr=False, compare=False)

    @property
    def ok(self) -> bool:
        return not self.mismatches

    def merge(self, other: "CheckReport") -> None:
        self.compared += other.compared
        self.mismatches += other.mismatches
        self.skipped += other.skipped
        self.at_threshold += other.at_threshold
        self.max_abs_error = max(self.max_abs_error, other.max_abs_error)


def _not_data(x: Any) -> str | None:
    if isinstance(x, types.ModuleType):
        return "a module is not data"
    if inspect.isclass(x):
        return "a class is not data"
    if callable(x) and not isinstance(x, (np.ndarray, np.generic)) and (
            inspect.isroutine(x) or isinstance(x, (types.FunctionType, types.BuiltinFunctionType, np.ufunc))):
        return "a function is not data"
    return None


def _is_numeric(x: Any) -> bool:
    return isinstance(x, (np.ndarray, np.generic, bool, int, float, complex)) and not isinstance(x, np.void)


def _numeric_kind(x: Any) -> str:
    """Whether ``x`` is an array (a 0-d one too) or a single number (a NumPy scalar or a
    Python number: their types are not compared, ``np.float64`` is a ``float``). A 0-d array
    where NumPy gives a scalar is another answer: ``+=`` writes it in place, it is not
    hashable, and ``repr`` and ``type`` show it."""
    return "array" if isinstance(x, np.ndarray) else "number"


def _numeric_name(x: Any) -> str:
    return f"{x.ndim}-d ndarray" if isinstance(x, np.ndarray) and x.ndim == 0 else type(x).__name__


def _compare_arrays(got: Any, want: Any, path: str, terms: int, scale: float, report: CheckReport) -> None:
    x, y = np.asarray(got), np.asarray(want)
    if x.shape != y.shape:
        report.mismatches.append(Mismatch(path, f"shape {x.shape} where NumPy gives {y.shape}"))
        return
    kinds = {"b": "bool", "i": "integer", "u": "integer", "f": "floating", "c": "complex"}
    if x.dtype.kind not in kinds or y.dtype.kind not in kinds:
        report.compared += 1
        if x.dtype != y.dtype or not np.array_equal(x, y):
            report.mismatches.append(Mismatch(path, f"{x.dtype} values differ from NumPy's {y.dtype}"))
        return
    if isinstance(want, (np.ndarray, np.generic)) and x.dtype != y.dtype:
        # NumPy's result type is part of the answer (float32 stays float32, int32 sums to int64)
        report.mismatches.append(Mismatch(path, f"dtype {x.dtype} where NumPy gives {y.dtype}"))
        return
    report.compared += 1
    if x.size == 0:
        return
    if y.dtype.kind in "biu" and x.dtype.kind in "biu":
        if not np.array_equal(x, y):
            diff = np.abs(x.astype(np.float64) - y.astype(np.float64))
            report.mismatches.append(Mismatch(path, f"{int(np.count_nonzero(diff))} of {x.size} integer values "
                                              f"differ", float(diff.max())))
        return
    dt = np.result_type(x.dtype, y.dtype) if y.dtype.kind in "fc" else x.dtype
    xc, yc = x.astype(np.complex128), y.astype(np.complex128)
    nan_x, nan_y = np.isnan(xc), np.isnan(yc)
    if not np.array_equal(nan_x, nan_y):
        report.mismatches.append(Mismatch(path, f"NaN in {int(np.count_nonzero(nan_x ^ nan_y))} places where the "
                                          "other has a number"))
        return
    finite = np.isfinite(xc) & np.isfinite(yc)
    if not np.array_equal(xc[~finite & ~nan_x], yc[~finite & ~nan_y]):
        report.mismatches.append(Mismatch(path, "infinities differ"))
        return
    if not finite.any():
        return
    a, b = xc[finite], yc[finite]
    magnitude = float(np.max(np.abs(b))) if b.size else 0.0
    if y.ndim == 0 or terms > 1:
        # a scalar summarises the program's arrays (a residual, an energy), and an array a
        # reduction may have made (a gradient near convergence, X.T @ (p - y)) sums terms
        # of their size: its rounding error is at their scale, however much cancellation
        # made it small. Without reductions an array keeps its own magnitude.
        magnitude = max(magnitude, scale)
    tol = tolerance(dt if dt.kind in "fc" else np.float64, terms, magnitude)
    diff = np.abs(a - b)
    err = float(diff.max())
    report.max_abs_error = max(report.max_abs_error, err)
    bad = diff > tol.atol + tol.rtol * np.abs(b)
    if bad.any():
        rel, relative = _relative(diff[bad], b[bad])
        report.mismatches.append(Mismatch(path, f"{int(np.count_nonzero(bad))} of {b.size} values differ by up to "
                                          f"{err:.3g} ({relative}); allowed: {tol.why}", err, rel))


def _state(x: Any) -> Any:
    if isinstance(x, np.random.Generator):
        return x.bit_generator.state
    if isinstance(x, np.random.BitGenerator):
        return x.state
    return x.get_state(legacy=False)   # RandomState


def _same_type(got: Any, want: Any) -> bool:
    """Whether ``got`` is of ``want``'s type; a class the program itself defines (a
    namedtuple, a dataclass) is created anew by each run of its source, so the plain run's
    class and the captured run's are different objects with the same module and name."""
    a, b = type(got), type(want)
    if a is b:
        return True
    return (a.__module__, a.__qualname__) == (b.__module__, b.__qualname__) and b.__module__ in _PROGRAM_MODULES


#: The module names a program run by ``exec`` (plainly, captured or in a notebook) gives
#: the classes it defines.
_PROGRAM_MODULES = frozenset({"__main__", "builtins"})


def _compare(got: Any, want: Any, path: str, terms: int, scale: float, report: CheckReport, depth: int) -> None:
    if depth > 50:
        report.skipped.append(Skipped(path, "nested more than 50 levels deep"))
        return
    why = _not_data(want)
    if why is not None:
        report.skipped.append(Skipped(path, why))
        return
    if isinstance(want, (np.random.Generator, np.random.BitGenerator, np.random.RandomState)):
        if type(got) is not type(want):
            report.mismatches.append(Mismatch(path, f"a {type(got).__name__} where NumPy gives a {type(want).__name__}"))
            return
        _compare(_state(got), _state(want), f"{path}.state", terms, scale, report, depth + 1)
        return
    if isinstance(want, np.ndarray) and want.dtype == object:
        _compare_objects_array(got, want, path, terms, scale, report, depth)
        return
    if _is_numeric(want):
        if not _is_numeric(got) or _numeric_kind(got) != _numeric_kind(want):
            report.mismatches.append(Mismatch(path, f"a {_numeric_name(got)} where NumPy gives a {_numeric_name(want)}"))
            return
        _compare_arrays(got, want, path, terms, scale, report)
        return
    if isinstance(want, Mapping):
        if not isinstance(got, Mapping) or not _same_type(got, want):
            report.mismatches.append(Mismatch(path, f"a {type(got).__name__} where NumPy gives a {type(want).__name__}"))
            return
        if list(got) != list(want):
            report.mismatches.append(Mismatch(path, f"keys {sorted(map(repr, got))} where NumPy gives "
                                              f"{sorted(map(repr, want))}"))
            return
        try:   # a mapping may refuse to be read: a closed np.load(...) NpzFile raises AttributeError
            pairs = [(k, got[k], want[k]) for k in want]
        except Exception as exc:
            report.skipped.append(Skipped(path, f"its items cannot be read ({type(exc).__name__}: {exc})"))
            return
        for k, a, b in pairs:
            _compare(a, b, f"{path}[{k!r}]", terms, scale, report, depth + 1)
        return
    if isinstance(want, (list, tuple)):
        if not _same_type(got, want) or len(got) != len(want):
            what = f"{type(got).__name__} of {len(got)}" if isinstance(got, (list, tuple)) else type(got).__name__
            report.mismatches.append(Mismatch(path, f"a {what} where NumPy gives a {type(want).__name__} of {len(want)}"))
            return
        for i, (a, b) in enumerate(zip(got, want)):
            _compare(a, b, f"{path}[{i}]", terms, scale, report, depth + 1)
        return
    if dataclasses.is_dataclass(want) and not isinstance(want, type):
        if not _same_type(got, want):
            report.mismatches.append(Mismatch(path, f"a {type(got).__name__} where NumPy gives a {type(want).__name__}"))
            return
        for f in dataclasses.fields(want):
            _compare(getattr(got, f.name), getattr(want, f.name), f"{path}.{f.name}", terms, scale, report, depth + 1)
        return
    _compare_object(got, want, path, terms, scale, report, depth)


def _compare_objects_array(got: Any, want: np.ndarray, path: str, terms: int, scale: float, report: CheckReport,
                           depth: int) -> None:
    """An array of objects (``np.array([a, b], dtype=object)`` of arrays of other lengths)
    element by element: ``==`` on it compares the arrays inside, whose truth is ambiguous."""
    if not isinstance(got, np.ndarray) or got.dtype != object or got.shape != want.shape:
        what = f"{got.dtype} array of shape {got.shape}" if isinstance(got, np.ndarray) else type(got).__name__
        report.mismatches.append(Mismatch(path, f"a {what} where NumPy gives an object array of shape {want.shape}"))
        return
    for index in np.ndindex(want.shape):
        _compare(got[index], want[index], f"{path}[{', '.join(map(str, index))}]", terms, scale, report, depth + 1)


#: Objects compared attribute by attribute in one comparison; past it, the rest are skipped.
OBJECT_BUDGET = 2000

#: Where installed libraries live (see :func:`_walked`).
_INSTALLED = tuple({sysconfig.get_paths()[k] for k in ("purelib", "platlib")})


def _walked(cls: type) -> bool:
    """Whether objects of ``cls`` are compared attribute by attribute: all but installed
    libraries' (site-packages). Those hold state no two plain runs share (a matplotlib
    figure: ids as dict keys, weak references, timestamps), so their attributes differ."""
    where = getattr(sys.modules.get(cls.__module__), "__file__", None) or ""
    return not where.startswith(_INSTALLED)


def _compare_object(got: Any, want: Any, path: str, terms: int, scale: float, report: CheckReport, depth: int) -> None:
    if not _same_type(got, want):
        report.mismatches.append(Mismatch(path, f"a {type(got).__name__} where NumPy gives a {type(want).__name__}"))
        return
    if want is None or want is Ellipsis or want is NotImplemented:
        report.compared += 1   # a singleton of the same type is the same value
        return
    if type(want).__eq__ is not object.__eq__:
        try:
            same = bool(want == got)
        except Exception as exc:  # a user's __eq__ may raise anything
            report.skipped.append(Skipped(path, f"its == raised {type(exc).__name__}, and it has no other form "
                                          "to compare"))
            return
        report.compared += 1
        if not same:
            report.mismatches.append(Mismatch(path, f"{type(want).__name__} values are not equal"))
        return
    attrs = getattr(want, "__dict__", None)
    if isinstance(attrs, dict) and attrs and isinstance(getattr(got, "__dict__", None), dict):
        if not _walked(type(want)):
            report.skipped.append(Skipped(path, f"a {type(want).__module__}.{type(want).__qualname__} (an installed "
                                          "library's object) compares by identity only"))
            return
        if (id(got), id(want)) in report.visited:
            return   # compared along another path, or a cycle back to an object being compared
        if len(report.visited) >= OBJECT_BUDGET:
            report.skipped.append(Skipped(path, f"more than {OBJECT_BUDGET} objects compared attribute by "
                                          "attribute; the rest of the object graph is not compared"))
            return
        report.visited.add((id(got), id(want)))
        _compare(dict(vars(got)), dict(attrs), f"{path}.__dict__", terms, scale, report, depth + 1)
        return
    report.skipped.append(Skipped(path, f"a {type(want).__name__} compares by identity only"))


def compare_values(got: Any, want: Any, path: str = "value", terms: int = 1, scale: float = 0.0) -> CheckReport:
    """Compare ``got`` (fusionlab's) with ``want`` (plain NumPy's) structurally; ``terms``
    is the largest number of terms a reduction of the program sums (see :func:`tolerance`),
    ``scale`` the largest magnitude among the program's arrays: a scalar's tolerance is
    scaled by it (see :func:`array_scale`)."""
    report = CheckReport()
    _compare(got, want, path, terms, scale, report, 0)
    return report


def array_scale(values: Iterable[Any], depth: int = 4) -> float:
    """The largest finite magnitude among the floating arrays in ``values`` (through
    lists, tuples and dicts, ``depth`` levels deep).

    >>> array_scale([np.array([1.0, -3.0]), {"u": [np.array([np.inf, 2.0])]}, 1e9])
    3.0
    """
    best = 0.0
    for v in values:
        if isinstance(v, np.ndarray) and v.ndim and v.dtype.kind in "fc" and v.size:
            finite = np.abs(v[np.isfinite(v)])
            best = max(best, float(finite.max()) if finite.size else 0.0)
        elif depth and isinstance(v, (list, tuple)):
            best = max(best, array_scale(v, depth - 1))
        elif depth and isinstance(v, dict):
            best = max(best, array_scale(v.values(), depth - 1))
    return best


def check_namespace(got: Mapping[str, Any], want: Mapping[str, Any], names: Iterable[str] | None = None,
                    terms: int = 1, bounds: Mapping[str, Any] | None = None) -> CheckReport:
    """Compare the variables ``names`` (default: every variable of ``got``; labels such as
    ``pairs[0]`` name an element of a list or tuple) with plain NumPy's namespace ``want``.

    ``bounds`` holds, by label, the error model's bound of each value
    (:func:`program_bounds`): a value with one is held to it element by element; the others
    to :func:`tolerance`."""
    report = CheckReport()
    bounds = bounds or {}
    chosen = [n for n in (list(got) if names is None else names) if not n.startswith("__")]
    scale = array_scale(_found(want, n) for n in chosen)
    for name in chosen:
        try:
            expected = lookup(want, name)
        except (KeyError, IndexError, TypeError):
            report.mismatches.append(Mismatch(name, "plain NumPy has no such variable"))
            continue
        value = lookup(got, name)
        if name in bounds and _boundable(value, expected, bounds[name]):
            bound = _capped(bounds[name], expected, tolerance(np.result_type(expected), terms, scale))
            report.merge(compare_bounded(value, expected, bound, name))
        else:
            report.merge(compare_values(value, expected, name, terms, scale))
    return report


def _capped(bound: Any, expected: Any, tol: Tolerance) -> np.ndarray:
    """``bound`` with its infinite elements of a float value replaced by the per-array
    tolerance: the model gives up there (a division by a difference within its bound of
    zero, a long float32 sum feeding a ``std``), and "anything goes" would let a wrong
    kernel pass where the tolerance of the check before the model still catches it.

    >>> _capped(np.array([1e-9, np.inf]), np.array([1.0, 2.0]), Tolerance(1e-6, 0.0, "")).tolist()
    [1e-09, 2e-06]
    >>> _capped(np.array([np.inf]), np.array([3]), Tolerance(0.0, 0.0, "")).tolist()   # integers: a threshold
    [inf]
    """
    b = np.asarray(bound, dtype=np.float64)
    if np.result_type(expected).kind not in "fc" or not np.isinf(b).any():
        return b
    return np.where(np.isinf(b), tol.atol + tol.rtol * np.abs(np.asarray(expected)), b)


def _boundable(value: Any, expected: Any, bound: Any) -> bool:
    """Whether a value can be held to its bound: numbers of NumPy's kind and shape, and a
    bound the model knows (NaN: :data:`fusionlab.runtime.errors.UNKNOWN`)."""
    b = np.asarray(bound, dtype=np.float64)
    return (_is_numeric(expected) and _is_numeric(value) and _numeric_kind(value) == _numeric_kind(expected)
            and np.shape(value) == np.shape(expected) == b.shape and not np.isnan(b).any())


def compare_bounded(got: Any, want: Any, bound: Any, path: str = "value") -> CheckReport:
    """Compare one numeric value with NumPy's, element by element within ``bound`` (the
    error model's: :mod:`fusionlab.runtime.errors`): floats within it (and one unit in the
    last place of NumPy's value, for the bound's own rounding); bools and integers exactly,
    except where the bound says a threshold was within reach.

    >>> compare_bounded(np.array([1.0, 2.0]), np.array([1.0, 2.0 + 1e-12]), np.array([0.0, 1e-11])).ok
    True
    >>> r = compare_bounded(np.array([1.0, 2.0]), np.array([1.0, 2.0 + 1e-9]), np.array([0.0, 1e-11]))
    >>> r.ok, r.mismatches[0].reason.split(";")[0]
    (False, '1 of 2 values differ by up to 1e-09 (relative 5e-10)')
    >>> compare_bounded(np.array([True, False]), np.array([True, True]), np.array([0.0, 1.0])).at_threshold[0].reason
    '1 of 2 values differ where an operand was within its error bound of a threshold'
    """
    report = CheckReport()
    x, y, b = np.asarray(got), np.asarray(want), np.asarray(bound, dtype=np.float64)
    if y.dtype.kind not in "biufc" or x.dtype.kind not in "biufc" or (
            isinstance(want, (np.ndarray, np.generic)) and x.dtype != y.dtype):
        return compare_values(got, want, path)
    report.compared += 1
    if y.dtype.kind in "fc" or x.dtype.kind in "fc":
        return _bounded_floats(x, y, b, path, report)
    diff = np.abs(x.astype(np.float64) - y.astype(np.float64))
    differ = diff > 0
    if differ.any():
        bad = diff > b
        if bad.any():
            report.mismatches.append(Mismatch(path, f"{int(np.count_nonzero(bad))} of {x.size} integer values differ",
                                              float(diff.max())))
        else:
            report.at_threshold.append(Skipped(path, f"{int(np.count_nonzero(differ))} of {x.size} values differ "
                                               "where an operand was within its error bound of a threshold"))
    return report


def _bounded_floats(x: np.ndarray, y: np.ndarray, b: np.ndarray, path: str, report: CheckReport) -> CheckReport:
    xc, yc = x.astype(np.complex128), y.astype(np.complex128)
    nan_x, nan_y = np.isnan(xc), np.isnan(yc)
    if not np.array_equal(nan_x, nan_y):
        report.mismatches.append(Mismatch(path, f"NaN in {int(np.count_nonzero(nan_x ^ nan_y))} places where the "
                                          "other has a number"))
        return report
    finite = np.isfinite(xc) & np.isfinite(yc)
    if not np.array_equal(xc[~finite & ~nan_x], yc[~finite & ~nan_y]):
        report.mismatches.append(Mismatch(path, "infinities differ"))
        return report
    if not finite.any():
        return report
    a, w, bound = xc[finite], yc[finite], np.broadcast_to(b, x.shape)[finite]
    eps = float(np.finfo(np.result_type(x.dtype, y.dtype, np.float16)).eps)
    diff = np.abs(a - w)
    err = float(diff.max())
    report.max_abs_error = max(report.max_abs_error, err)
    bad = diff > bound + eps * np.abs(w) + np.finfo(np.float64).tiny
    if bad.any():
        rel, relative, allowed = _how_far(diff[bad], w[bad], bound[bad])
        report.mismatches.append(Mismatch(path, f"{int(np.count_nonzero(bad))} of {w.size} values differ by up to "
                                          f"{err:.3g} ({relative}); allowed: {allowed}", err, rel))
    return report


def _relative(diff: np.ndarray, want: np.ndarray) -> tuple[float | None, str]:
    """The largest difference relative to NumPy's nonzero values, and its words; None where
    NumPy's values are all 0 (to a zero, any difference is infinitely far: "relative
    1.3e+308" said nothing, and a mismatch's error is finite or none)."""
    nonzero = want != 0
    if not nonzero.any():
        return None, "NumPy's values there are 0"
    rel = float(np.max(diff[nonzero] / np.abs(want[nonzero])))
    return rel, f"relative {rel:.3g}"


def _how_far(diff: np.ndarray, want: np.ndarray, bound: np.ndarray) -> tuple[float | None, str, str]:
    """The largest relative difference and the words for it and for the bound it passed:
    relative to NumPy's nonzero values only (to a zero, any difference is infinitely far),
    and "exactly" where the error model allows no rounding at all.

    >>> _how_far(np.array([1.0, 2.0]), np.array([0.0, 4.0]), np.array([0.0, 1.0]))
    (0.5, 'relative 0.5', "the error model's bound, exceeded up to 2 times; exactly NumPy's value where it allows no rounding")
    >>> _how_far(np.array([3.0]), np.array([0.0]), np.array([0.0]))[1:]
    ("NumPy's values there are 0", "exactly NumPy's value (the error model allows no rounding there)")
    """
    rel, relative = _relative(diff, want)
    rounded = bound > 0
    if not rounded.any():
        return rel, relative, "exactly NumPy's value (the error model allows no rounding there)"
    over = float(np.max(diff[rounded] / bound[rounded]))
    allowed = f"the error model's bound, exceeded up to {over:.3g} times"
    if not rounded.all():
        allowed += "; exactly NumPy's value where it allows no rounding"
    return rel, relative, allowed


def program_bounds(target: Any) -> dict[str, Any]:
    """The error model's bound of every value a capture leaves (by label, as
    ``Capture.values_from`` gives them): :func:`fusionlab.runtime.errors.propagate` on its
    batches; ``{}`` for anything else (plain objects: :func:`tolerance` applies)."""
    from fusionlab.runtime.errors import propagate

    batches, outputs = getattr(target, "batches", None), getattr(target, "values_from", None)
    if batches is None or outputs is None:
        return {}
    _, bounds = propagate(batches, target.externals, target.inputs)
    return outputs(bounds)


def _found(namespace: Mapping[str, Any], label: str) -> Any:
    try:
        return lookup(namespace, label)
    except (KeyError, IndexError, TypeError):
        return None


def lookup(namespace: Mapping[str, Any], label: str) -> Any:
    """A variable by its label: ``x``, or an item of a list, tuple or dict in one,
    nested: ``pairs[0]``, ``result[0][1]``, ``state['u']``.

    >>> lookup({"r": ([1, 2], {"u": 3})}, "r[1]['u']"), lookup({"r": ([1, 2], 0)}, "r[0][1]")
    (3, 2)
    """
    if label in namespace:
        return namespace[label]
    m = _ITEM.fullmatch(label)
    if m is not None:
        return lookup(namespace, m.group(1))[ast.literal_eval(m.group(2))]
    raise KeyError(label)


# a label's last item: an integer or a quoted key without brackets or quotes
_ITEM = re.compile(r"(.+)\[(-?\d+|'[^'\[\]\\]*')\]")


def plain_namespace(source: str, filename: str = "<numpy>", draws: GlobalDraws | None = None) -> dict[str, Any]:
    """The namespace ``source`` leaves when run plainly (its printing discarded); exceptions propagate.

    The run starts the global random streams (``np.random.rand``, ``random.random``) at
    ``draws`` (a capture's :attr:`~fusionlab.capture.Capture.draws`) when given, and leaves
    them as it found them: a capture run after it, or before it from ``draws``, draws the
    same numbers (:mod:`fusionlab.runtime.draws`)."""
    ns: dict[str, Any] = {"__name__": "__main__"}
    before = global_draws()
    if draws is not None:
        draws.restore()
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(source, filename, "exec"), ns)
    finally:
        before.restore()
    return ns


def reduction_terms(programs: Iterable[Any]) -> int:
    """The most terms any reduction (or contraction: the product of its summed extents) of
    ``programs`` (bytecode) sums: what its float results may be reordered over."""
    from fusionlab.ir.bytecode import OpFamily, contraction_letters

    most = 1
    for p in programs:
        for ins in p:
            if ins.opcode in OpFamily.CONTRACTION:
                sa, sb, so = contraction_letters(ins.attr("subscripts"))
                extent = dict(zip(sa + sb, ins.views_in[0].shape + ins.views_in[1].shape))
                most = max(most, math.prod(n for c, n in extent.items() if c not in so))
                continue
            if ins.opcode in OpFamily.REDUCTION | OpFamily.SCAN | OpFamily.HISTOGRAM:   # weighted bins: sums too
                src = ins.views_in[0] if ins.views_in else None
                if src is None:
                    continue
                axis = ins.attr("axis")
                n = src.size if axis is None or src.ndim == 0 else src.shape[axis % src.ndim]
                most = max(most, int(n))
    return most
