"""The recorder behind a capture: bases, the open batch, DEL on garbage collection, flushes.

Capture is *eager*: every operation runs on real NumPy data as it is recorded, so the
values the user's code sees — and the namespace it leaves — are exactly plain NumPy's.
The recorded program is a second, re-executable description of the same computation.
"""

from __future__ import annotations

import enum
import sys
import weakref
from dataclasses import dataclass, field

import numpy as np

from ..bytecode import Base, Instruction, Opcode, Program, ProgramError, View, check_instruction
from ..execute.reference import Externals

CELL_FILENAME = "<fusionlab-capture>"


class NoticeKind(enum.Enum):
    """Why part of the user's code was not captured as fusible instructions."""

    OPAQUE = "run by NumPy as an opaque instruction (never fused)"
    SYNC = "a value left the captured world (SYNC)"
    COPY = "an overlapping update was split into a copy and the update (Def. 11)"


@dataclass(frozen=True)
class Notice:
    """Something the user should know about a capture, with the line of their code."""

    kind: NoticeKind
    message: str
    line: int | None = None

    def __str__(self) -> str:
        where = f"line {self.line}: " if self.line else ""
        return f"{where}{self.message} — {self.kind.value}"


class Handle:
    """A base as seen by the traced arrays: its IR ``Base`` and its real storage.

    Traced arrays hold a strong reference; when the last one goes, the recorder emits DEL.
    """

    __slots__ = ("base", "real", "dummy", "__weakref__")

    def __init__(self, base: Base, real: np.ndarray) -> None:
        self.base, self.real = base, real
        self.dummy: np.ndarray | None = None

    def geometry(self) -> np.ndarray:
        """A byte array laid out like the IR base: NumPy view operations applied to it
        give the IR view's shape, strides and offset (one byte per element)."""
        if self.dummy is None:
            self.dummy = np.empty(max(self.base.size, 1), dtype=np.uint8)
        return self.dummy


@dataclass
class Recorder:
    """The instructions captured so far, cut into batches at every flush."""

    batches: list[Program] = field(default_factory=list)
    current: list[Instruction] = field(default_factory=list)
    bases: dict[str, Base] = field(default_factory=dict)
    inputs: dict[str, np.ndarray] = field(default_factory=dict)
    externals: Externals = field(default_factory=Externals)
    notices: list[Notice] = field(default_factory=list)
    active: bool = True
    _counter: int = 0
    _key: int = 0

    # -- bases ------------------------------------------------------------------------
    def new_base(self, real: np.ndarray, prefix: str = "t") -> Handle:
        """A fresh base whose real storage is ``real`` (C-contiguous, owned by the capture)."""
        name = f"{prefix}{self._counter}"
        self._counter += 1
        base = Base(name, real.dtype.name, real.shape)
        self.bases[name] = base
        h = Handle(base, real)
        weakref.finalize(h, self._freed, name)
        return h

    def input_base(self, real: np.ndarray) -> Handle:
        """A base for an array that existed before (the user's, or a fallback's result):
        its initial contents are kept so the program can be re-run."""
        h = self.new_base(real, prefix="x")
        self.inputs[h.base.name] = np.array(real, copy=True)
        return h

    def _freed(self, name: str) -> None:
        if self.active:
            self.emit(Instruction(Opcode.DEL, (self.bases[name].view(),)))

    def next_key(self) -> int:
        self._key += 1
        return self._key

    # -- instructions -------------------------------------------------------------------
    def emit(self, ins: Instruction) -> None:
        """Append an instruction to the open batch (checked against the IR's rules)."""
        if not self.active:
            return
        check_instruction(ins)
        self.current.append(ins)

    def sync(self, view: View, why: str) -> None:
        """SYNC the base of ``view`` and flush: the batch so far is complete."""
        if not self.active:
            return
        self.emit(Instruction(Opcode.SYNC, (), (view.base.view(),)))
        self.notice(NoticeKind.SYNC, why)
        self.flush()

    def flush(self) -> None:
        """Close the open batch (if it has instructions)."""
        if not self.current:
            return
        used: dict[str, Base] = {}
        for ins in self.current:
            for v in ins.outputs + ins.views_in:
                used.setdefault(v.base.name, v.base)
        try:
            self.batches.append(Program(tuple(used.values()), tuple(self.current)))
        except ProgramError as exc:  # a bug in capture, not in the user's code
            raise AssertionError(f"capture produced an invalid batch: {exc}") from exc
        self.current = []

    def notice(self, kind: NoticeKind, message: str) -> None:
        """Record a notice, with the line of the user's code that caused it."""
        if kind is NoticeKind.SYNC:
            return  # flushes are normal; they show as batches, not as notices
        notice = Notice(kind, message, user_line())
        if notice not in self.notices:  # a loop repeats its notices: say each once
            self.notices.append(notice)


def user_line() -> int | None:
    """The line of the user's cell being executed, if any."""
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_filename == CELL_FILENAME:
            return frame.f_lineno
        frame = frame.f_back
    return None
