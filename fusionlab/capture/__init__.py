"""Capture: ordinary NumPy code recorded as array bytecode, one batch per flush.

``capture(source_or_function, namespace)`` runs the code unmodified. NumPy arrays become
traced stand-ins; every array operation runs on real data *and* is recorded. A value
leaving the captured world (``print``, ``float()``, ``if``, ``.item()``) is SYNCed and
ends a batch, as Bohrium flushed; arrays that become unreachable are DELed; at the end
every array bound to a name is SYNCed. Bases carry the names the user's code bound them
to (``x``, ``y`` below; a later array bound to ``x`` is ``x_1``), temporaries are numbered.
What capture cannot express runs with NumPy (an OPAQUE instruction, or plain NumPy outside
the program) and is listed in ``notices``. Afterwards every object the user holds is what
plain NumPy gives (the values *are* what it computed; see :mod:`.plain`).

Examples
--------
>>> cap = capture('''
... import numpy as np
... x = np.arange(4.0)
... y = np.sqrt(x) * 2 + x
... ''')
>>> print(cap.program.to_text())
ARRAY x float64[4]
ARRAY t0 float64[4]
ARRAY t1 float64[4]
ARRAY y float64[4]
RANGE x
SQRT t0, x
MULTIPLY t1, t0, 2
DEL t0
ADD y, t1, x
DEL t1
SYNC x
SYNC y
>>> type(cap.namespace["y"]).__name__, cap.namespace["y"].tolist()
('ndarray', [0.0, 3.0, 4.82842712474619, 6.464101615137754])
"""

from __future__ import annotations

import ast
import builtins
import functools
import inspect
import sys
import sysconfig
import textwrap
import time
import types
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import numpy as np

from fusionlab.ir.bytecode import Instruction, Opcode, Program, View
from fusionlab.runtime.reference import Externals, Storage, run_reference
from fusionlab.capture.budget import DEFAULT_BUDGET, UNLIMITED, CaptureBudget
from fusionlab.runtime.draws import GlobalDraws, global_draws
from fusionlab.capture.cached import call_plainly, is_cached
from fusionlab.capture.array import Traced, TracedFlat, recordable, hand_out, unwrap, view_of
from fusionlab.capture.functions import GeneratorProxy, Proxy, Recording, make_numpy, random_method
from fusionlab.capture.plain import Plainer
from fusionlab.capture.recorder import (
    CELL_FILENAME, SCALAR_LOOP_THRESHOLD, Handle, Notice, NoticeKind, Recorder, loop_lines,
    loop_parents, rename_view,
)

__all__ = ["capture", "Capture", "Notice", "NoticeKind", "CaptureError", "SCALAR_LOOP_THRESHOLD", "real_object",
           "CaptureBudget", "DEFAULT_BUDGET", "UNLIMITED"]


class CaptureError(Exception):
    """The user's code raised: ``original`` is their exception, with their traceback."""

    def __init__(self, original: BaseException, capture: "Capture") -> None:
        self.original, self.capture = original, capture
        super().__init__(f"{type(original).__name__}: {original}")


@dataclass
class Capture:
    """The recorded batches of a run, its namespace and what could not be fused."""

    batches: list[Program]
    namespace: dict[str, Any]
    notices: list[Notice]
    externals: Externals
    inputs: dict[str, np.ndarray]
    seconds: float
    source: str = ""
    #: what the user keeps, by label: the view and how it is handed back (``False``: an
    #: array; ``True``: a NumPy scalar; ``float`` or ``complex``: a Python number); when
    #: capture ``stopped``, the recorded part's results instead (the bases SYNCed at the
    #: stop, by base name: what the user holds was computed after the program)
    outputs: dict[str, tuple[View, Any]] = field(default_factory=dict)
    #: the value of the source's last statement when it is an expression (what IPython
    #: shows as the cell's ``Out``), as plain NumPy's object; ``None`` otherwise
    value: Any = None
    #: the notice saying where capture stopped at its budget (the batches are the part
    #: recorded before it, and the rest of the code ran as plain NumPy); ``None`` when
    #: everything was recorded
    stopped: Notice | None = None
    #: the global random streams' state when the code started (a plain run started from it
    #: draws what the capture drew: :mod:`fusionlab.runtime.draws`)
    draws: GlobalDraws | None = None
    #: where capture stopped, the real contents of the bases it SYNCed then (by base name;
    #: those of up to a million elements): what a replay of the batches must give
    stop_values: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def program(self) -> Program:
        """All batches as one program (declarations merged)."""
        bases: dict[str, Any] = {}
        body = []
        for b in self.batches:
            for base in b.bases:
                bases.setdefault(base.name, base)
            body.extend(b.instructions)
        return Program(tuple(bases.values()), tuple(body))

    @property
    def instructions(self) -> int:
        """How many instructions were recorded."""
        return sum(len(b) for b in self.batches)

    def replay(self, partitions: Mapping[int, Any] | None = None) -> dict[str, Any]:
        """Re-run every batch with the reference executor (batch ``k`` under
        ``partitions[k]`` when given); returns the value of each array variable the
        capture left in the namespace, as the program computes it."""
        storage = Storage(self.inputs)
        synced: dict[str, np.ndarray] = {}
        # a replay checks the program: its floating-point warnings are the program's own,
        # already shown (or silenced by its np.errstate) when it ran
        with np.errstate(all="ignore"):
            for k, batch in enumerate(self.batches):
                part = None if partitions is None else partitions.get(k)
                synced.update(run_reference(batch, part, externals=self.externals, storage=storage))
        return self.values_from(synced)

    def values_from(self, synced: Mapping[str, np.ndarray]) -> dict[str, Any]:
        """The namespace's array variables read out of synced bases (by base name)."""
        out: dict[str, Any] = {}
        for name, (view, scalar) in self.outputs.items():
            flat = synced[view.base.name].reshape(-1)
            value = np.lib.stride_tricks.as_strided(
                flat[view.offset:], view.shape, tuple(s * flat.itemsize for s in view.strides)
            ).copy()
            out[name] = value if scalar is False else value[()] if scalar is True else scalar(value[()])
        return out


class _Interrupted(Exception):
    """The cell was interrupted: capture skips building its program."""


def _import_hook(rec: Recorder, np_proxy: Proxy) -> Callable[..., Any]:
    """``__import__`` for the captured code: ``numpy`` is the proxy while the capture runs.
    Functions defined in the cell keep these builtins for good, so once the capture is
    over the hook gives the real modules."""
    real_import = builtins.__import__
    lib = np_proxy.lib

    def hooked(name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0) -> Any:
        if rec.active and level == 0 and (name == "numpy" or name.startswith("numpy.")):
            if name == "numpy":
                return np_proxy
            if not fromlist:
                real_import(name, globals, locals, fromlist, level)
                return np_proxy
            if name == "numpy.random":
                return np_proxy.random
            if name == "numpy.lib":
                return lib
            if name == "numpy.lib.stride_tricks":
                return lib.stride_tricks
        return real_import(name, globals, locals, fromlist, level)

    return hooked


def _stands_for(obj: Any) -> type:
    """The class plain NumPy's object would have: ndarray, or the scalar's type."""
    return obj.dtype.type if obj._scalar else np.ndarray


def _isinstance(obj: Any, classes: Any) -> bool:
    """``isinstance`` for the captured code: a traced array is an ``np.ndarray`` (a traced
    scalar an ``np.float64``, hence a ``float``), as plain NumPy's would be."""
    if type(obj) is Traced:
        return issubclass(_stands_for(obj), classes)
    return builtins.isinstance(obj, classes)


class _TypeOfCaptured(type):
    """The metaclass of the captured code's ``type`` (:class:`_CapturedType`): one argument
    gives the class plain NumPy's object would have (``type(x) is np.ndarray`` holds for a
    traced array, ``type(x.sum()).__name__`` is ``'float64'``); three arguments, ``isinstance``
    and ``issubclass`` are the real ``type``'s, and a cell's metaclass may subclass it."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        if cls is _CapturedType and len(args) == 1 and not kwargs:
            obj = args[0]
            return _stands_for(obj) if type(obj) is Traced else type(obj)
        if len(args) == 3 and isinstance(args[2], dict) and "__module__" not in args[2]:
            # a new class's module is its caller's, as ``type(name, bases, ns)`` takes it
            # (from the calling frame's globals), not this module
            # ('builtins' when the globals have no __name__: what such a class reports)
            module = sys._getframe(1).f_globals.get("__name__", "builtins")
            args = (args[0], args[1], {"__module__": module, **args[2]})
        if cls is not _CapturedType:  # a metaclass the cell derives from ``type``
            return type.__call__(cls, *args, **kwargs)
        return type(*args, **kwargs)

    def __instancecheck__(cls, obj: Any) -> bool:
        return builtins.isinstance(obj, type) if cls is _CapturedType else type.__instancecheck__(cls, obj)

    def __subclasscheck__(cls, sub: Any) -> bool:
        return issubclass(sub, type) if cls is _CapturedType else type.__subclasscheck__(cls, sub)


class _CapturedType(type, metaclass=_TypeOfCaptured):
    """``type`` as captured code sees it (see :class:`_TypeOfCaptured`)."""


for _shown_as_type in (_TypeOfCaptured, _CapturedType):  # what type(type).__name__ and repr(type) say
    _shown_as_type.__name__ = _shown_as_type.__qualname__ = "type"
    _shown_as_type.__module__ = "builtins"


def _stand_ins(np_proxy: Proxy) -> dict[int, Any]:
    """Real NumPy objects (by id) and the stand-in captured code gets for each."""
    out: dict[int, Any] = {}
    for proxy in (np_proxy, np_proxy.random, np_proxy.lib, np_proxy.lib.stride_tricks):
        out[id(proxy.real_module)] = proxy
        for value in vars(proxy).values():
            if isinstance(value, Recording):
                out[id(value.real)] = value
    return out


def _swap_numpy(ns: dict[str, Any], np_proxy: Proxy) -> None:
    """Names bound to NumPy's modules or recorded functions (``np``, ``from numpy import
    zeros``) see the stand-ins during the capture."""
    swap = _stand_ins(np_proxy)
    for k, v in list(ns.items()):
        got = swap.get(id(v))
        if got is not None and _to_real(got) is v:
            ns[k] = got


def _to_real(x: Any) -> Any:
    """The real object behind one of capture's stand-ins, or ``None``."""
    if isinstance(x, Traced):
        return unwrap(x)
    if isinstance(x, Proxy):
        return x.real_module
    if isinstance(x, (Recording, GeneratorProxy)):
        return x.real
    if isinstance(x, TracedFlat):   # ``f = a.flat`` kept: NumPy's flatiter of the real array
        return x.real
    return None


def real_object(x: Any) -> Any:
    r"""The plain NumPy object one of capture's stand-ins stands for (``None`` for others).

    Examples
    --------
    >>> import numpy as np
    >>> cap = capture("import numpy as np\nf = np.sum\n", {})
    >>> real_object(np) is None, real_object(3) is None
    (True, True)
    """
    return _to_real(x)


def _lift_namespace(rec: Recorder, ns: dict[str, Any]) -> None:
    """The user's arrays enter the captured world as inputs named after their variables
    (same memory: in-place updates reach the user's objects, as in plain NumPy). Their
    contents are copied only if the cell uses them, and they are never DELed: a cell that
    rebinds a name leaves the old array to NumPy, so re-running a cell records the same
    program. One array bound to two names is one input, and an array that is a view of
    another (``b = a[2:]``, ``x = big[::2]``) is that view of the other's base, so writes
    through either are seen by both."""
    roots: dict[int, Handle] = {}
    groups: dict[int, list[Handle]] = {}  # the bases over each piece of memory
    seen: dict[int, Traced] = {}

    def new_input(a: np.ndarray, label: str, memory: int) -> Handle:
        h = rec.input_base(a, label=label, lazy=True)
        rec.keep(h)
        groups.setdefault(memory, []).append(h)
        return h

    for k, v in list(ns.items()):
        if type(v) is not np.ndarray or v.ndim == 0 or not recordable(v.dtype) or k.startswith("_"):
            continue
        t = seen.get(id(v))
        if t is None:
            root = _root(v)
            h = roots.get(id(root))
            if h is None and (root is v or type(root) is np.ndarray and root.dtype == v.dtype
                              and root.flags.c_contiguous):
                h = roots[id(root)] = new_input(root, k, id(root))
            view = None if h is None else h.full if root is v else view_of(h, v)
            if view is None:  # not a view the bytecode can describe: a base of its own
                h = new_input(v, k, id(root))
                view = h.full
            if len(groups[id(root)]) > 1:  # bases sharing memory: each reloaded when another wrote it
                for other in groups[id(root)]:
                    other.escape()
            t = seen[id(v)] = Traced(rec, h, view, v)
        ns[k] = t


def _lift_arguments(rec: Recorder, fn: Callable[..., Any], args: tuple[Any, ...],
                    kwargs: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The arrays passed to a captured function as inputs named after its parameters
    (as the namespace's arrays are): one input per array however often it is used."""
    try:
        bound = inspect.signature(fn).bind(*args, **kwargs)
    except (TypeError, ValueError):  # the call itself raises the user's error
        return args, kwargs
    named = dict(bound.arguments)
    _lift_namespace(rec, named)
    for k, v in named.items():
        bound.arguments[k] = v
    return bound.args, bound.kwargs


def _root(a: np.ndarray) -> np.ndarray:
    """The array owning ``a``'s memory (``a`` itself when it has no array base)."""
    root = a
    while isinstance(root.base, np.ndarray):
        root = root.base
    return root


#: how deep into containers, and over how many of their items, the arrays a user keeps
#: are looked for (past that, a container's arrays are the user's NumPy values but not
#: part of the program's outputs: nothing replays or checks them)
_OUTPUT_DEPTH = 4
_OUTPUT_ITEMS = 10_000


def _kept_arrays(ns: dict[str, Any], left: Mapping[int, Any]) -> list[tuple[str, Any]]:
    """Every traced array the user keeps, with its label: bound to a name (``x``), or an
    item of a list, tuple or dict bound to one, nested (``result[0][1]``, ``state['u']``);
    and every float the program handed to Python (its id in ``left``) kept the same way."""
    found: list[tuple[str, Any]] = []
    budget = _OUTPUT_ITEMS
    stack: list[tuple[str, Any, int]] = [(k, v, 0) for k, v in reversed(list(ns.items())) if not k.startswith("_")]
    while stack and budget > 0:
        label, v, depth = stack.pop()
        budget -= 1
        if isinstance(v, Traced) or type(v) in (float, complex) and id(v) in left:
            found.append((label, v))
            continue
        if depth >= _OUTPUT_DEPTH:
            continue
        if isinstance(v, (list, tuple)):
            items = list(enumerate(v))
        elif isinstance(v, dict):
            # keys as the label's plain ``int`` or ``str`` (an ``np.str_`` key's repr is
            # ``np.str_('a')``, a bool's ``True``: labels nothing could look up)
            items = [(int(key), x) if isinstance(key, int) else (str(key), x) for key, x in v.items()
                     if isinstance(key, int) and not isinstance(key, bool) or (
                         isinstance(key, str) and key.isprintable() and not set(key) & set("[]'\\"))]
        else:
            continue
        stack.extend((f"{label}[{key!r}]", x, depth + 1) for key, x in reversed(items))
    return found


def _sync_outputs(rec: Recorder, ns: dict[str, Any]) -> dict[str, tuple[View, Any]]:
    """SYNC what the user keeps (:func:`_kept_arrays`), except the user's own arrays the
    cell did not change."""
    outputs: dict[str, tuple[View, Any]] = {}
    synced: set[str] = set()
    for k, v in ns.items():
        if isinstance(v, Traced) and not k.startswith("_"):
            rec.name_base(v._h.base.name, k)
    for label, t in _kept_arrays(ns, rec.left):
        if not isinstance(t, Traced):
            value, view, writes = rec.left[id(t)]
            if value is t and rec.write_counts[view.base.name] == writes:
                outputs[label] = (view, type(t))  # synced when it left, unchanged since
            continue
        name = t._h.base.name
        if t._h.keep and t._h.escaped and not t._h.lazy:
            t._h.touch()  # changed through a plain alias since its last use: reloaded, so written
        if t._h.keep and name not in rec.written:
            continue  # the user's array, unchanged by the program: nothing to hand back
        if name not in synced:
            if t._h.watched:
                t._h.touch()
            rec.emit(Instruction(Opcode.SYNC, (), (t._h.full,)), checked=True)
            synced.add(name)
        outputs[label] = (t._v, t._scalar)
    return outputs


def capture(
    source_or_function: str | Callable[..., Any],
    namespace: dict[str, Any] | None = None,
    *,
    args: tuple[Any, ...] = (),
    kwargs: Mapping[str, Any] | None = None,
    budget: CaptureBudget = UNLIMITED,
    filename: str = CELL_FILENAME,
) -> Capture:
    """Run NumPy code and record it as bytecode.

    Parameters
    ----------
    source_or_function
        Python source (a cell or a file), or a function (called with ``args``/``kwargs``;
        its return value lands in the namespace as ``result``).
    namespace
        The globals to run in; updated in place with plain NumPy values, as plain
        execution would leave it. A fresh one when omitted.
    budget
        How much to record (:class:`CaptureBudget`; no limit by default). Past it, capture
        finishes the operation it is in and the rest of the code runs as plain NumPy: the
        namespace is plain NumPy's all the same, the batches are the part recorded before
        (its live results SYNCed), ``stopped`` is the notice saying where, and
        ``outputs`` are those results by base name (what the user holds was computed
        after the program, so nothing compares it with the program's replay).
    filename
        The name the source is compiled under: what its warnings, tracebacks and the
        code objects it defines name as their file (plain Python's name for the same source:
        a script's path, IPython's cell name).

    Raises
    ------
    CaptureError
        When the user's code raises; ``.original`` carries their traceback. The namespace
        keeps what the code assigned before the error, as plain values.

    Examples
    --------
    Bases take the user's names (a rebound name is numbered), temporaries are ``t0, ...``:

    >>> cap = capture("import numpy as np\\nA = np.ones(3)\\nA = np.sqrt(A) * 2\\n")
    >>> [b.name for b in cap.program.bases]
    ['A', 't0', 'A_1']

    A Python loop over elements is said once (``SCALAR_LOOP_THRESHOLD``), and its element
    reads then run as plain NumPy scalars instead of being recorded one by one:

    >>> cap = capture("import numpy as np\\nx = np.arange(100.0)\\ny = [x[i] ** 2 for i in range(len(x))]\\n")
    >>> [(n.kind.name, n.line) for n in cap.notices], cap.instructions < 200
    ([('SCALAR_LOOP', 3)], True)
    >>> type(cap.namespace["y"][-1]).__name__
    'float64'

    A loop past the budget runs on as plain NumPy; the program is what came before:

    >>> src = "import numpy as np\\nx = np.zeros(3)\\nfor i in range(1000):\\n    x = x + 1.0\\n"
    >>> cap = capture(src, budget=CaptureBudget(instructions=20))
    >>> cap.namespace["x"].tolist(), type(cap.namespace["x"]).__name__, cap.stopped.line
    ([1000.0, 1000.0, 1000.0], 'ndarray', 4)
    >>> cap.instructions < 30
    True
    """
    started = time.perf_counter()
    draws = global_draws()
    rec = Recorder(filename=filename)
    rec.stop_frame = sys._getframe()
    rec.start(budget)
    np_proxy = make_numpy(rec)
    # The code runs in the user's own dict, not a copy: functions it defines keep it as
    # their globals, so later cells (captured or plain) call them with what that dict holds
    # then — the real numpy once capture has put it back.
    run_ns: dict[str, Any] = namespace if namespace is not None else {}
    had_builtins, old_builtins = "__builtins__" in run_ns, run_ns.get("__builtins__")
    _lift_namespace(rec, run_ns)
    _swap_numpy(run_ns, np_proxy)
    bi = dict(vars(builtins))
    bi["__import__"] = _import_hook(rec, np_proxy)
    bi["isinstance"] = _isinstance
    bi["type"] = _CapturedType  # a class: cells may subclass it (metaclasses)
    bi[CLASS_OF] = _class_of
    bi[CALLEE] = _callee
    bi[RECORDER] = rec
    run_ns["__builtins__"] = bi
    error: BaseException | None = None
    value: Any = None
    source = ""
    glb: dict[str, Any] = run_ns
    try:
        if callable(source_or_function):
            fn = source_or_function
            source = _source_of(fn)
            glb = dict(fn.__globals__)
            _swap_numpy(glb, np_proxy)
            glb["__builtins__"] = bi
            traced_fn = types.FunctionType(fn.__code__, glb, fn.__name__, fn.__defaults__, fn.__closure__)
            traced_fn.__kwdefaults__ = fn.__kwdefaults__
            call_args, call_kwargs = _lift_arguments(rec, fn, args, dict(kwargs or {}))
            run_ns["result"] = traced_fn(*call_args, **call_kwargs)
        else:
            source = source_or_function
            rec.loop_lines = loop_lines(textwrap.dedent(source))
            rec.loop_parents = loop_parents(textwrap.dedent(source))
            body, last = _split_last_expression(textwrap.dedent(source), filename)
            exec(compile(body, filename, "exec"), run_ns)
            if last is not None:
                value = eval(compile(last, filename, "eval"), run_ns)
    except BaseException as exc:  # the user's error (or an interrupt): the namespace is restored first
        error = exc
    # arrays bound to names are what the user keeps: SYNC them, then stop recording
    try:
        if isinstance(error, (KeyboardInterrupt, SystemExit)):
            raise _Interrupted  # the user stopped the cell: no program to build, only the namespace
        rec.cell_done()
        # past the budget, what the user holds was computed after the program: the outputs
        # are the recorded part's results (the bases SYNCed at the stop), by base name
        outputs = _sync_outputs(rec, run_ns) if not rec.stopped else {
            name: (rec.full_views[name], False) for name in rec.stop_synced}
        rename = rec.finish()
        outputs = {rename[k].name if rec.stopped and k in rename else k: (rename_view(v, rename), s)
                   for k, (v, s) in outputs.items()}
    except _Interrupted:
        rec.active, rec.batches, outputs = False, [], {}
    except Exception as exc:  # a bug in capture: the cell's values are still NumPy's own
        rec.active, rec.batches, outputs = False, [], {}
        rec.notices.append(Notice(NoticeKind.FAILED, f"{type(exc).__name__}: {exc}"))
    modules = {str(run_ns.get("__name__", "builtins")), str(glb.get("__name__", "builtins"))}
    plainer = Plainer(_to_real, modules, [run_ns, glb])
    for k, v in list(run_ns.items()):
        if k != "__builtins__":
            w = plainer(v)
            if w is not v:
                run_ns[k] = w
    value = plainer(value)
    # plain exec leaves the builtins in a namespace that had none: without them a function
    # the cell defined could not import (NumPy's array printing in its f-string raised
    # "Unable to configure default ndarray.__str__" once capture had removed them)
    run_ns["__builtins__"] = old_builtins if had_builtins else vars(builtins)
    cap = Capture(
        batches=rec.batches,
        namespace=run_ns,
        notices=rec.notices,
        externals=rec.externals,
        inputs=rec.inputs,
        seconds=time.perf_counter() - started,
        draws=draws,
        source=source,
        outputs=outputs,
        value=value,
        stopped=next((n for n in rec.notices if n.kind is NoticeKind.BUDGET), None),
        stop_values=rec.stop_values,
    )
    if isinstance(error, (KeyboardInterrupt, SystemExit)):
        raise error
    if error is not None:
        raise CaptureError(error, cap).with_traceback(error.__traceback__)
    return cap


#: The builtin captured code reads ``x.__class__`` through (see :class:`_CellRewrite`).
CLASS_OF = "__fusionlab_class_of__"


def _class_of(obj: Any) -> type:
    """``obj.__class__`` as plain NumPy's object would answer it (see :func:`_stands_for`)."""
    return _stands_for(obj) if type(obj) is Traced else obj.__class__


#: The builtin every call of captured code goes through first (see :class:`_CellRewrite`).
CALLEE = "__fusionlab_callee__"
#: The builtin holding the running capture's recorder (for :func:`_callee`'s notices).
RECORDER = "__fusionlab_recorder__"
#: Top-level packages whose functions are given traced arrays: capture records NumPy's and
#: its own; IPython's (the cell's transformed ``%time``, ``!cmd``) read their caller's frame,
#: which a handing wrapper would replace (and it shows stand-ins as NumPy's objects)
_RECORDED = frozenset({"numpy", "fusionlab", "IPython", "ipykernel"})
_SITE = tuple({sysconfig.get_paths()[k] for k in ("purelib", "platlib")})
#: The standard library's numeric modules, written in Python, which are handed plain NumPy
#: objects as an installed library is: ``statistics.mean(x)`` converts its result with
#: ``type(x[0])``, the stand-in's class, and ``fractions.Fraction(s)`` refuses a stand-in
_NUMERIC_STDLIB = frozenset({"statistics", "fractions", "decimal"})


@functools.lru_cache(maxsize=None)
def _installed_library(package: str) -> bool:
    """Whether ``package`` (a top-level module name) is an installed library other than
    NumPy: its file is under site-packages (matplotlib, scipy, pandas, numba, IPython)."""
    if package in _NUMERIC_STDLIB:
        return True
    module = sys.modules.get(package)
    path = getattr(module, "__file__", None) or ""
    return package not in _RECORDED and bool(path) and path.startswith(_SITE)


def _owner_module(fn: Any) -> str:
    """The module a callable belongs to: a bound method's object's class's, a function's or
    class's own, else (a callable object: a Numba dispatcher, a ufunc) its class's."""
    owner = getattr(fn, "__self__", None)
    if owner is not None and not isinstance(owner, types.ModuleType):
        return getattr(type(owner), "__module__", None) or ""
    if isinstance(fn, (type, types.FunctionType, types.BuiltinFunctionType)):
        module = getattr(fn, "__module__", None)
        return module if isinstance(module, str) else ""
    return getattr(type(fn), "__module__", None) or ""


def _library_callable(fn: Any) -> bool:
    """Whether ``fn`` is an installed library's: a Python function by the file its code is
    in, anything else by its module (``__main__`` is the notebook's own code: in a kernel,
    ``sys.modules['__main__']`` is the launcher, which is installed)."""
    if isinstance(fn, types.FunctionType):
        module = fn.__module__ if isinstance(fn.__module__, str) else ""
        if module.partition(".")[0] in _NUMERIC_STDLIB:
            return True
        return fn.__code__.co_filename.startswith(_SITE) and module.partition(".")[0] not in _RECORDED
    package = _owner_module(fn).partition(".")[0]
    return package != "__main__" and _installed_library(package)


#: The builtins' and ``math``'s callables, which ``_callee`` hands back as they are (by id:
#: they live as long as the interpreter, and a callable may be unhashable): a scalar loop
#: calls ``range``, ``min`` and ``math.sqrt`` hundreds of thousands of times, and the checks
#: below cost 10 us a call (pythran's growcut: 2.3 s of 18). ``memoryview``, ``bytes`` and
#: ``bytearray`` are the exceptions ``_callee`` replaces.
_AS_THEY_ARE = frozenset(id(v) for module in (builtins, __import__("math")) for v in vars(module).values()
                         if callable(v) and v not in (memoryview, bytes, bytearray))


def _callee(fn: Any) -> Any:
    """``fn`` itself, or for an installed library's callable (``ax.hist``, ``scipy``'s,
    ``numba``'s) one that hands it plain NumPy objects: a traced array is not an ndarray
    to code capture does not record (matplotlib took 50 traced values for 50 data sets).
    The call itself stays in the user's frame (``super()``, ``locals()``). A function of the
    user's session defined outside the cell (an earlier plain cell) runs rewritten as the
    cell is (:func:`_session_function`), so that its own calls are looked up the same way.
    A cached function (``functools.lru_cache``) runs plainly (:mod:`.cached`)."""
    if id(fn) in _AS_THEY_ARE:
        return fn
    if type(fn) is types.FunctionType and fn.__code__.co_filename == CELL_FILENAME and \
            str(fn.__module__).partition(".")[0] not in _NUMERIC_STDLIB:
        return fn   # the cell's own function (what the checks below conclude, 10 us sooner)
    if is_cached(fn):
        rec = sys._getframe(1).f_builtins.get(RECORDER)
        if isinstance(rec, Recorder):
            name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", "a cached function")
            rec.notice(NoticeKind.PLAIN, f"{name} is cached (functools.lru_cache): its calls run as plain "
                                         "NumPy, so that its cache keeps NumPy's arrays")
        return lambda *args, **kwargs: call_plainly(fn, args, kwargs)
    if fn is memoryview:
        return _memoryview
    if fn is bytes or fn is bytearray:
        return functools.partial(_bytes, fn)
    drawing = random_method(fn)
    if drawing is not None:
        return drawing
    if not _library_callable(fn):
        if isinstance(fn, types.MethodType) and isinstance(fn.__func__, types.FunctionType):
            f = _session_function(fn.__func__)
            return fn if f is fn.__func__ else types.MethodType(f, fn.__self__)
        return _session_function(fn) if isinstance(fn, types.FunctionType) else fn

    @functools.wraps(fn)
    def handing(*args: Any, **kwargs: Any) -> Any:
        return fn(*(_handed(a) for a in args), **{k: _handed(v) for k, v in kwargs.items()})
    return handing


def _memoryview(obj: Any) -> memoryview:
    """``memoryview(x)``: a stand-in has no buffer (TypeError), so a traced array's is its
    real memory's, handed out as ``x.data`` is (the base escapes: writes are reloaded)."""
    return obj.data if isinstance(obj, Traced) else memoryview(obj)


def _bytes(kind: type, *args: Any, **kwargs: Any) -> Any:
    """``bytes(x)``, ``bytearray(x)``: a stand-in has no buffer (``bytes`` then took it for
    an integer and raised TypeError); its value leaves the program, as ``x.tobytes()``."""
    return kind(*(a._leave(f"{kind.__name__}()") if isinstance(a, Traced) else a for a in args), **kwargs)


def _session_function(fn: types.FunctionType) -> types.FunctionType:
    """``fn`` with its code rewritten as a cell's (:class:`_CellRewrite`) when it belongs to
    the captured namespace but was compiled outside capture (an earlier plain cell's helper
    handing a traced array to scipy handed the stand-in); ``fn`` itself otherwise."""
    builtins_of = fn.__globals__.get("__builtins__")
    if (fn.__code__.co_filename == CELL_FILENAME or CALLEE in fn.__code__.co_names
            or not isinstance(builtins_of, dict) or builtins_of.get(CALLEE) is not _callee):
        return fn
    try:
        code = _rewritten_code(fn.__code__)
    except Exception:   # a bug here must not fail the user's cell: the helper runs as it was
        code = None
    if code is None:
        return fn
    new = types.FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
    new.__kwdefaults__, new.__qualname__ = fn.__kwdefaults__, fn.__qualname__
    new.__dict__.update(fn.__dict__)
    return new


@functools.lru_cache(maxsize=512)
def _rewritten_code(code: types.CodeType) -> types.CodeType | None:
    """The code of a ``def`` or ``lambda`` recompiled from its source with
    :class:`_CellRewrite` (same file and lines: tracebacks and warnings name the user's
    cell); ``None`` when its source is not found or the recompiled code would not be the
    same function (two lambdas on its line, private names in a method, a changed source)."""
    try:
        lines, start = inspect.getsourcelines(code)
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except (OSError, TypeError, SyntaxError, IndentationError):
        return None
    ast.increment_lineno(tree, max(start, 1) - 1)
    node = _definition(tree, code)
    if node is None:
        return None
    if code.co_freevars:
        # a closure (or a method using super()): compiled inside a function binding the same
        # names, so they stay free variables, filled from the original's closure cells
        binds = [ast.copy_location(ast.Assign([ast.Name(v, ast.Store())], ast.Constant(None)), node)
                 for v in code.co_freevars]
        outer = ast.copy_location(ast.FunctionDef(name="__fusionlab_outer__", args=ast.arguments(
            posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]),
            body=binds + [node], decorator_list=[]), node)
        node = outer
    tree = ast.fix_missing_locations(_CellRewrite().visit(ast.Module([node], [])))
    try:
        module = compile(tree, code.co_filename, "exec", dont_inherit=True)
    except (SyntaxError, ValueError, TypeError):
        return None
    new = _code_named(module, code.co_name, depth=2)
    if new is None or new.co_freevars != code.co_freevars or new.co_argcount != code.co_argcount \
            or not set(code.co_names) - {"__class__"} <= set(new.co_names):
        return None
    return new


def _definition(tree: ast.Module, code: types.CodeType) -> ast.stmt | None:
    """The statement defining ``code`` in its source's tree: the ``def`` itself (without its
    decorators: the decorated object is what the user holds), or for a lambda an assignment
    of the only lambda starting on its first line."""
    if code.co_name == "<lambda>":
        found = [n for n in ast.walk(tree) if isinstance(n, ast.Lambda) and n.lineno == code.co_firstlineno]
        if len(found) != 1:
            return None
        return ast.copy_location(ast.Assign([ast.Name("__fusionlab_lambda__", ast.Store())], found[0]), found[0])
    node = tree.body[0] if len(tree.body) == 1 else None
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or node.name != code.co_name:
        return None
    node.decorator_list = []
    return node


def _code_named(code: types.CodeType, name: str, depth: int) -> types.CodeType | None:
    """The code object called ``name`` among ``code``'s constants, ``depth`` levels down."""
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            if c.co_name == name:
                return c
            found = _code_named(c, name, depth - 1) if depth > 1 else None
            if found is not None:
                return found
    return None


def _handed(x: Any) -> Any:
    real = None if isinstance(x, (Traced, tuple, list, dict)) else _to_real(x)
    return real if real is not None else hand_out(x)


class _CellRewrite(ast.NodeTransformer):
    """The cell's syntax as capture runs it.

    - ``x.__class__`` read in the cell becomes ``__fusionlab_class_of__(x)``: an attribute
      lookup cannot be intercepted on the stand-in without making ``isinstance`` in capture
      itself (and in NumPy's Python code) believe it is an ndarray.
    - ``f(...)`` becomes ``__fusionlab_callee__(f)(...)`` (:func:`_callee`): an installed
      library's function is handed plain arrays. Only the callee is looked up: arguments are
      evaluated and the call made where they were, in the same order."""

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        self.generic_visit(node)
        if node.attr != "__class__" or not isinstance(node.ctx, ast.Load):
            return node
        return ast.copy_location(ast.Call(ast.Name(CLASS_OF, ast.Load()), [node.value], []), node)

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id in (CLASS_OF, CALLEE):
            return node
        node.func = ast.copy_location(ast.Call(ast.Name(CALLEE, ast.Load()), [node.func], []), node.func)
        return node


def _split_last_expression(source: str, filename: str = CELL_FILENAME) -> tuple[ast.Module, ast.Expression | None]:
    """The source as a module without its last statement when that is an expression, and
    that expression (IPython shows its value as the cell's output). A ``SyntaxError`` is
    raised here, as ``compile`` would."""
    tree = ast.fix_missing_locations(_CellRewrite().visit(ast.parse(source, filename)))
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
        return tree, last
    return tree, None


def _source_of(fn: Callable[..., Any]) -> str:
    try:
        return textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError):
        return ""
