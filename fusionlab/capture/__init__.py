"""Capture: ordinary NumPy code recorded as array bytecode, one batch per flush.

``capture(source_or_function, namespace)`` runs the code unmodified. NumPy arrays become
traced stand-ins; every array operation runs on real data *and* is recorded. A value
leaving the captured world (``print``, ``float()``, ``if``, ``.item()``, ``np.asarray``)
is SYNCed and ends a batch, as Bohrium flushed; arrays that become unreachable are DELed;
at the end every array bound to a name is SYNCed. What capture cannot express runs with
NumPy as an OPAQUE instruction and is listed in ``notices``. Afterwards the namespace holds
plain NumPy values, equal to what plain NumPy computes (they *are* what it computed).

Examples
--------
>>> cap = capture('''
... import numpy as np
... x = np.arange(4.0)
... y = np.sqrt(x) * 2 + x
... ''')
>>> print(cap.program.to_text())
ARRAY t0 float64[4]
ARRAY t1 float64[4]
ARRAY t2 float64[4]
ARRAY t3 float64[4]
RANGE t0
SQRT t1, t0
MULTIPLY t2, t1, 2
DEL t1
ADD t3, t2, t0
DEL t2
SYNC t0
SYNC t3
>>> type(cap.namespace["y"]).__name__, cap.namespace["y"].tolist()
('ndarray', [0.0, 3.0, 4.82842712474619, 6.464101615137754])
"""

from __future__ import annotations

import builtins
import inspect
import textwrap
import time
import types
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import numpy as np

from ..bytecode import Instruction, Opcode, Program, View
from ..execute.reference import Externals, Storage, run_reference
from .array import Traced, lift, unwrap
from .functions import make_numpy
from .recorder import CELL_FILENAME, Notice, NoticeKind, Recorder

__all__ = ["capture", "Capture", "Notice", "NoticeKind", "CaptureError"]


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
    outputs: dict[str, tuple[View, bool]] = field(default_factory=dict)

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
            out[name] = value[()] if scalar else value
        return out


def _import_hook(np_proxy: types.ModuleType) -> Callable[..., Any]:
    real_import = builtins.__import__

    def hooked(name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0) -> Any:
        if level == 0 and (name == "numpy" or name.startswith("numpy.")):
            if name == "numpy.random":
                return np_proxy.random if fromlist else np_proxy
            if name == "numpy":
                return np_proxy
        return real_import(name, globals, locals, fromlist, level)

    return hooked


def _swap_numpy(ns: dict[str, Any], np_proxy: types.ModuleType) -> None:
    for k, v in list(ns.items()):
        if v is np:
            ns[k] = np_proxy
        elif v is np.random:
            ns[k] = np_proxy.random


def capture(
    source_or_function: str | Callable[..., Any],
    namespace: dict[str, Any] | None = None,
    *,
    args: tuple[Any, ...] = (),
    kwargs: Mapping[str, Any] | None = None,
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

    Raises
    ------
    CaptureError
        When the user's code raises; ``.original`` carries their traceback. The namespace
        keeps what the code assigned before the error, as plain values.
    """
    started = time.perf_counter()
    rec = Recorder()
    np_proxy = make_numpy(rec)
    user_ns = namespace if namespace is not None else {}
    # The code runs in the user's own dict, not a copy: functions it defines keep it as
    # their globals, so later cells (captured or plain) call them with what that dict holds
    # then — the real numpy once capture has put it back.
    run_ns: dict[str, Any] = user_ns
    before = dict(run_ns)
    # the user's arrays enter the captured world as inputs (same memory: in-place updates
    # reach the user's objects, as in plain NumPy)
    for k, v in list(run_ns.items()):
        if isinstance(v, np.ndarray) and v.ndim > 0 and not k.startswith("_"):
            run_ns[k] = lift(rec, v)
    _swap_numpy(run_ns, np_proxy)
    bi = dict(vars(builtins))
    bi["__import__"] = _import_hook(np_proxy)
    run_ns["__builtins__"] = bi
    error: BaseException | None = None
    source = ""
    try:
        if callable(source_or_function):
            fn = source_or_function
            source = _source_of(fn)
            glb = dict(fn.__globals__)
            _swap_numpy(glb, np_proxy)
            glb["__builtins__"] = bi
            traced_fn = types.FunctionType(fn.__code__, glb, fn.__name__, fn.__defaults__, fn.__closure__)
            traced_fn.__kwdefaults__ = fn.__kwdefaults__
            run_ns["result"] = traced_fn(*args, **dict(kwargs or {}))
        else:
            source = source_or_function
            code = compile(textwrap.dedent(source), CELL_FILENAME, "exec")
            exec(code, run_ns)
    except BaseException as exc:  # the user's error (or an interrupt): the namespace is restored first
        error = exc
    # arrays bound to names are what the user keeps: SYNC them, then stop recording
    outputs: dict[str, tuple[View, bool]] = {}
    for k, v in run_ns.items():
        if k.startswith("_"):
            continue
        items = [(k, v)] if isinstance(v, Traced) else (
            [(f"{k}[{i}]", x) for i, x in enumerate(v) if isinstance(x, Traced)] if isinstance(v, (tuple, list)) else []
        )
        for label, t in items:
            if all(t._v.base != seen.base for seen, _ in outputs.values()):
                rec.emit(Instruction(Opcode.SYNC, (), (t._v.base.view(),)))
            outputs[label] = (t._v, t._scalar)
    rec.flush()
    rec.active = False
    for k, v in list(run_ns.items()):
        run_ns[k] = _plain(v, np_proxy)
    if "__builtins__" in before:
        run_ns["__builtins__"] = before["__builtins__"]
    else:
        run_ns.pop("__builtins__", None)
    cap = Capture(
        batches=rec.batches,
        namespace=run_ns,
        notices=rec.notices,
        externals=rec.externals,
        inputs=rec.inputs,
        seconds=time.perf_counter() - started,
        source=source,
        outputs=outputs,
    )
    if isinstance(error, (KeyboardInterrupt, SystemExit)):
        raise error
    if error is not None:
        raise CaptureError(error, cap).with_traceback(error.__traceback__)
    return cap


def _plain(v: Any, np_proxy: types.ModuleType) -> Any:
    """What plain NumPy would have left: arrays for traced arrays, the real modules."""
    if isinstance(v, Traced):
        return unwrap(v)
    if v is np_proxy:
        return np
    if v is np_proxy.random:
        return np.random
    if isinstance(v, tuple) and any(isinstance(x, Traced) for x in v):
        return tuple(_plain(x, np_proxy) for x in v)
    if isinstance(v, list) and any(isinstance(x, Traced) for x in v):
        return [_plain(x, np_proxy) for x in v]
    if isinstance(v, dict) and any(isinstance(x, Traced) for x in v.values()):
        return {k: _plain(x, np_proxy) for k, x in v.items()}
    return v


def _source_of(fn: Callable[..., Any]) -> str:
    try:
        return textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError):
        return ""
