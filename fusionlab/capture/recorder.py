"""The recorder behind a capture: bases, the open batch, DEL on garbage collection, flushes.

Capture is *eager*: every operation runs on real NumPy data as it is recorded, so the
values the user's code sees — and the namespace it leaves — are exactly plain NumPy's.
The recorded program is a second, re-executable description of the same computation.

Bases are recorded under internal names and renamed when the capture ends
(:meth:`Recorder.finish`): a base takes the name the user's code first bound it to
(``A = np.zeros(4)`` makes base ``A``; a later array bound to ``A`` is ``A_1``), found by
looking at the variables of the user's frames while recording; the others are numbered
temporaries ``t0, t1, ...`` in order of first appearance, so an unchanged cell always
gives the same program.
"""

from __future__ import annotations

import ast
import enum
import os
import re
import sys
import types
import warnings
import weakref
from collections import Counter, deque
from dataclasses import dataclass, field

from typing import Any, Callable, Sequence

import numpy as np

from fusionlab.ir.bytecode import (
    Base, Instruction, Opcode, OpFamily, Program, ProgramError, View, check_instruction,
)
from fusionlab.runtime.reference import Externals
from fusionlab.capture.budget import UNLIMITED, CaptureBudget
from fusionlab.capture.masked import drop_superseded

CELL_FILENAME = "<fusionlab-capture>"

#: fusionlab's own sources: a frame in them is capture's, not the user's
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def user_traceback(tb: types.TracebackType | None, filename: str = CELL_FILENAME) -> types.TracebackType | None:
    """The traceback of the user's error as plain Python's would read: from the captured
    cell's (compiled as ``filename``) first frame on, without fusionlab's frames (the wrappers capture puts around
    NumPy's calls and operators; plain NumPy raises from C, or from its own frames, which
    are kept). ``tb`` itself when no frame is the cell's.

    Examples
    --------
    >>> import sys
    >>> from fusionlab.capture import CaptureError, capture
    >>> try:
    ...     capture("import numpy as np\\nx = np.arange(4.0)\\ny = x[9]\\n")
    ... except CaptureError as exc:
    ...     tb = user_traceback(exc.original.__traceback__)
    >>> (tb.tb_frame.f_code.co_filename, tb.tb_lineno, tb.tb_next)
    ('<fusionlab-capture>', 3, None)
    """
    frames = []
    while tb is not None:
        frames.append(tb)
        tb = tb.tb_next
    start = next((i for i, t in enumerate(frames) if t.tb_frame.f_code.co_filename == filename), None)
    if start is None:
        return frames[0] if frames else None
    kept = [t for t in frames[start:] if not os.path.abspath(t.tb_frame.f_code.co_filename).startswith(_PACKAGE)]
    out = None
    for t in reversed(kept):
        out = types.TracebackType(out, t.tb_frame, t.tb_lasti, t.tb_lineno)
    return out

#: One-element instructions recorded from one loop of the user's code before capture says
#: so (a :attr:`NoticeKind.SCALAR_LOOP` notice) and runs that loop's element reads and
#: one-element arithmetic as plain NumPy scalars from then on: a Python loop over elements
#: would otherwise record several instructions per element (a 200-element comprehension
#: made 814), which nothing can fuse and every later phase pays for. Only a loop whose
#: one-element instructions outnumber its whole-array ones (nested loops included) is a
#: loop over elements: a loop over matrix columns that reads one pivot per column keeps
#: its pivot traced, so that ``float(pivot)`` still ends the column's batch.
SCALAR_LOOP_THRESHOLD = 64

# modules whose frames are capture's own or NumPy's: their variables are not user names
_INTERNAL_MODULES = ("fusionlab.capture", "numpy")
# names the text format reads as something else than an array name
_TEXT_RESERVED = {"True", "False", "None", "inf", "nan"}


class NoticeKind(enum.Enum):
    """Why part of the user's code was not captured as fusible instructions."""

    OPAQUE = "run by NumPy as an opaque instruction (never fused)"
    SYNC = "a value left the captured world (SYNC)"
    COPY = "an overlapping update was split into a copy and the update (Def. 11)"
    ALIAS = "memory shared in a way the bytecode cannot describe: its contents are reloaded when used"
    PLAIN = "run as plain NumPy, outside the recorded program"
    SCALAR_LOOP = "a Python loop over single elements: vectorise it"
    FAILED = "capture could not build the program (a bug in fusionlab): the cell ran as plain NumPy"
    BUDGET = "capture stopped at its budget"
    BATCH = "a long batch was cut between two iterations"


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

    Traced arrays hold a strong reference; when the last one goes, the recorder emits DEL
    (unless ``keep``: the user's own arrays from before the capture, whose memory is
    NumPy's). ``lazy`` marks an input whose initial contents are copied only when first
    used; ``escaped`` a base whose memory is also reachable outside the program (a plain
    alias, a reinterpreting view): before each use its contents are compared with what the
    program knows (``belief``) and reloaded when they differ.
    """

    __slots__ = ("base", "full", "real", "dummy", "rec", "keep", "lazy", "escaped", "belief", "owner", "__weakref__")

    def __init__(self, base: Base, real: np.ndarray, rec: "Recorder") -> None:
        self.base, self.real, self.rec = base, real, rec
        self.full = rec.full_views[base.name]  # the whole base, made once
        self.dummy: np.ndarray | None = None
        self.keep = self.lazy = self.escaped = False
        self.belief: np.ndarray | None = None
        #: the traced array first made of the whole base (a weak reference): what a view's
        #: ``.base`` is, as plain NumPy's view's base is the array it was taken from
        self.owner: Callable[[], Any] | None = None

    @property
    def watched(self) -> bool:
        """Whether a use must first call :meth:`touch`."""
        return self.lazy or self.escaped

    def touch(self) -> None:
        """Called before real data is used: takes a lazy input's snapshot, and reloads an
        escaped base whose memory changed outside the program."""
        if self.lazy:
            self.lazy = False
            snapshot = self.rec.inputs[self.base.name] = np.array(self.real, copy=True)
            if self.escaped and self.belief is None:
                self.belief = snapshot  # the program starts from the memory as it is now
        if self.escaped and self.rec.active:
            belief = self.belief
            if belief is None or not _same(self.real, belief):
                self.belief = np.array(self.real, copy=True)
                self.rec.reload(self, self.belief)

    def escape(self) -> None:
        """Mark the base's memory as reachable outside the program from now on."""
        if not self.escaped:
            if not self.lazy:  # a lazy input is compared from its snapshot, taken at first use
                self.touch()
                # a base no instruction wrote and no input defines (``np.empty``'s) holds memory
                # the program does not know: whatever it holds at the next use is reloaded (its
                # old garbage could equal what a plain writer leaves there: no change seen)
                known = self.base.name in self.rec.written or self.base.name in self.rec.inputs
                self.belief = np.array(self.real, copy=True) if known else None
            self.escaped = True

    def geometry(self) -> np.ndarray:
        """A byte array laid out like the IR base: NumPy view operations applied to it
        give the IR view's shape, strides and offset (one byte per element)."""
        if self.dummy is None:
            self.dummy = np.empty(max(self.base.size, 1), dtype=np.uint8)
        return self.dummy


def _no_op(ins: Instruction) -> bool:
    """A COPY of a view onto itself: what ``x[i, k:] -= y`` leaves after the in-place
    update (Python assigns the updated view back to its own slice). It changes nothing;
    recorded, it would be one instruction in five of a row-update loop."""
    return ins.opcode is Opcode.COPY and len(ins.inputs) == 1 and ins.inputs[0] == ins.outputs[0]


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))


def _label(name: str) -> str | None:
    """A user variable name made valid for the text format (``None``: not a name to use)."""
    if not name or name == "_" or name.startswith("__") or not name.isidentifier():
        return None
    label = re.sub(r"[^A-Za-z0-9_]", "_", name)
    if label[0].isdigit():
        label = "_" + label
    return label + "_" if label in _TEXT_RESERVED else label


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
    #: the frame that started the capture: the search for user names stops there
    stop_frame: types.FrameType | None = None
    raw: list[list[Instruction]] = field(default_factory=list)
    labels: dict[str, str] = field(default_factory=dict)
    handles: "weakref.WeakValueDictionary[str, Handle]" = field(default_factory=weakref.WeakValueDictionary)
    written: set[str] = field(default_factory=set)
    kept: set[str] = field(default_factory=set)
    full_views: dict[str, View] = field(default_factory=dict)
    scalar_lines: Counter[int] = field(default_factory=Counter)
    plain_lines: set[int] = field(default_factory=set)
    #: instructions (by ``id``) a rewrite made redundant: dropped at :meth:`finish` when
    #: nothing reads their output (see :func:`.masked.drop_superseded`)
    superseded: set[int] = field(default_factory=set)
    #: how many instructions wrote each base so far
    write_counts: Counter[str] = field(default_factory=Counter)
    #: Python floats and complexes that left the program (``float(total)``), by ``id``:
    #: the value (kept alive, so the id stays its own), the view it came from and that
    #: base's write count then; a user variable holding one is an output to replay
    left: dict[int, tuple[Any, View, int]] = field(default_factory=dict)
    #: whole-array instructions recorded per loop (first line), its nested loops' included
    array_lines: Counter[int] = field(default_factory=Counter)
    #: the file name the cell's code is compiled under (its frames are the user's lines)
    filename: str = CELL_FILENAME
    #: each line of the cell inside a loop -> the loop's first line (see :func:`loop_lines`)
    loop_lines: dict[int, int] = field(default_factory=dict)
    #: each loop's first line -> the first line of the loop around it (see :func:`loop_parents`)
    loop_parents: dict[int, int] = field(default_factory=dict)
    #: how much to record before the rest of the cell runs as plain NumPy
    budget: CaptureBudget = UNLIMITED
    #: whether capture stopped at its budget (the rest of the code runs as plain NumPy)
    stopped: bool = False
    #: whether something waits for the next operation to start (see :meth:`plain`): the
    #: budget is spent (``_spent``: capture stops there) or the open batch is long (it is cut)
    halting: bool = False
    _spent: bool = False
    #: instructions recorded so far, and the clock reading when recording started
    recorded: int = 0
    started: float = 0.0
    #: the bases SYNCed where capture stopped and their real contents then (those of at most
    #: ``_KEPT_AT_STOP`` elements): what a replay of the recorded part must give
    stop_values: dict[str, np.ndarray] = field(default_factory=dict)
    #: every base SYNCed where capture stopped (internal names)
    stop_synced: list[str] = field(default_factory=list)
    #: bases not named yet -> the scan count after which they are no longer looked for
    _unnamed: dict[str, int] = field(default_factory=dict)
    #: the same, in order of that count (new bases come last): expired ones leave from the left
    _expiry: "deque[tuple[int, str]]" = field(default_factory=deque)
    _scans: int = 0
    _dtype_names: dict[np.dtype, str] = field(default_factory=dict)
    #: each live base's weak reference to its handle, whose death DELs the base
    _watch: dict[str, "weakref.ref[Handle]"] = field(default_factory=dict)
    #: the operation during which the budget ran out (its outermost frame): recording goes
    #: on until it is complete, so the program never holds half an operation
    _last_operation: Any = None
    #: the open batch passed the budget's ``batch_instructions``: it is cut at the start of
    #: an operation called from ``_cut_site`` (where the first cut was: later batches hold
    #: whole iterations of the user's loop, alike), asked once per operation (``_asked``)
    _cut_pending: bool = False
    _cut_site: tuple[types.CodeType, int] | None = None
    #: the offset, in the cut site's code, of the last operation asked since the batch
    #: passed its length
    _before: int | None = None
    _asked: Any = None
    #: batches cut for their length so far
    cuts: int = 0
    _counter: int = 0
    _key: int = 0

    # -- bases ------------------------------------------------------------------------
    def new_base(self, real: np.ndarray, prefix: str = "t") -> Handle:
        """A fresh base whose real storage is ``real`` (C-contiguous, owned by the capture)."""
        name = f"{prefix}{self._counter}"
        self._counter += 1
        dtype = self._dtype_names.get(real.dtype)
        if dtype is None:  # ``dtype.name`` is computed in Python each time it is read
            dtype = self._dtype_names[real.dtype] = real.dtype.name
        base = Base(name, dtype, real.shape)
        self.bases[name] = base
        self.full_views[name] = base.view()
        # the handle's own ndarray object: setting shape, strides or dtype on the user's
        # array (the same memory) must not change what the base is
        h = Handle(base, real.view(), self)
        self.handles[name] = h
        self._unnamed[name] = self._scans + _NAME_SCANS
        self._expiry.append((self._scans + _NAME_SCANS, name))
        # a plain weak reference (kept until it fires) costs a fifth of ``weakref.finalize``
        self._watch[name] = weakref.ref(h, lambda _ref, name=name: self._freed(name))
        return h

    def input_base(self, real: np.ndarray, label: str | None = None, lazy: bool = False) -> Handle:
        """A base for an array that existed before (the user's, or a fallback's result):
        its initial contents are kept so the program can be re-run (copied when first
        used if ``lazy``). ``label`` names it after the user's variable."""
        h = self.new_base(real, prefix="x")
        if label is not None:
            self.name_base(h.base.name, label)
        if lazy:
            h.lazy = True
        else:
            self.inputs[h.base.name] = np.array(real, copy=True)
        return h

    def name_base(self, internal: str, name: str) -> None:
        """Give base ``internal`` the user's name ``name`` (the first one given wins)."""
        self._unnamed.pop(internal, None)
        label = _label(name)
        if label is not None:
            self.labels.setdefault(internal, label)

    def _freed(self, name: str) -> None:
        self._watch.pop(name, None)
        self._unnamed.pop(name, None)
        if self.active and name not in self.kept:
            self.emit(Instruction(Opcode.DEL, (self.full_views[name],)), checked=True)

    def keep(self, h: Handle) -> None:
        """Never DEL ``h``'s base: its memory is the user's (NumPy frees it)."""
        h.keep = True
        self.kept.add(h.base.name)

    def next_key(self) -> int:
        self._key += 1
        return self._key

    # -- names ------------------------------------------------------------------------
    def scan_names(self) -> None:
        """Name live unnamed bases after the user's variables bound to them (in the frames
        of the user's code between here and the capture). A base is looked for during its
        first few scans only (``_NAME_SCANS``): one the user never binds (an element of a
        list) does not make every later instruction pay for a search."""
        if not self._unnamed:
            return
        try:
            self._scan(sys._getframe(2))
        except Exception:  # names are a courtesy: a frame that cannot be read keeps temporaries
            pass

    def _scan(self, frame: types.FrameType | None) -> None:
        from fusionlab.capture.array import Traced  # the recorder knows no traced arrays, only their bases

        found: dict[str, str] = {}
        while frame is not None and frame is not self.stop_frame:
            module = frame.f_globals.get("__name__", "")
            if not (isinstance(module, str) and module.startswith(_INTERNAL_MODULES)):
                views: dict[str, str] = {}
                for k, v in frame.f_locals.items():
                    if type(v) is Traced and v._h.base.name in self._unnamed:
                        name = v._h.base.name
                        if v._v.is_full():
                            found.setdefault(name, k)
                        else:
                            views.setdefault(name, k)
                for name, k in views.items():
                    found.setdefault(name, k)
            frame = frame.f_back
        for name, k in found.items():
            self.name_base(name, k)
        # one count for all (not one decrement per waiting base and scan: a loop making a
        # base per operation keeps _NAME_SCANS of them waiting)
        self._scans += 1
        while self._expiry and self._expiry[0][0] <= self._scans:
            last, name = self._expiry.popleft()
            if self._unnamed.get(name) == last:
                del self._unnamed[name]

    # -- instructions -------------------------------------------------------------------
    def emit(self, ins: Instruction, checked: bool = False) -> None:
        """Append an instruction to the open batch (checked against the IR's rules unless
        the caller just did: ``checked``).

        An instruction the IR rejects is not recorded: its real effect has happened
        already (capture is eager), so its output base is treated as changed outside the
        program and reloaded at its next use."""
        if not self.active or _no_op(ins):
            return
        if self.halting and ins.opcode is not Opcode.DEL and self.plain():  # a DEL may come from the GC
            return
        try:
            if not checked:
                check_instruction(ins)
        except ProgramError as exc:
            self.notice(NoticeKind.ALIAS, f"{ins.opcode.name} could not be recorded ({exc})")
            for v in ins.outputs:
                h = self.handles.get(v.base.name)
                if h is not None:
                    h.escaped, h.belief = True, None
            return
        self.scan_names()
        self.current.append(ins)
        self.recorded += 1
        if len(self.current) >= self.budget.batch_instructions and not self._cut_pending and not self.stopped:
            # the operation recording now is finished first (see :meth:`plain`)
            self._cut_pending, self._asked, self.halting = True, _operation_frame(), True
            self._before = None
        if self._last_operation is None and not self.budget.unlimited and (
                self.recorded >= self.budget.instructions or self.recorded % self.budget.every == 0):
            self._check_budget()
        if ins.opcode in OpFamily.SYSTEM:
            return
        if self.loop_lines and any(v.size > 1 for v in ins.outputs):
            self._count_array()
        for v in ins.outputs:
            name = v.base.name
            self.written.add(name)
            self.write_counts[name] += 1
            h = self.handles.get(name)
            if h is not None and h.escaped:
                # memory visiting each element once holds what the program wrote; other memory
                # (a view that overlaps itself) may not: reload it at the next use
                contiguous = h.real is not None and (h.real.flags.c_contiguous or h.real.flags.f_contiguous)
                h.belief = np.array(h.real, copy=True) if contiguous else None
            if v.size <= 1 and ins.domain is not None and np.prod(ins.domain) <= 1:
                self._count_scalar()

    # -- the budget ---------------------------------------------------------------------
    def start(self, budget: CaptureBudget) -> None:
        """Start recording under ``budget`` (a budget already spent stops at the first
        instruction: the whole code runs as plain NumPy)."""
        self.budget, self.started = budget, budget.clock()
        if budget.passed(0, 0.0):
            self._last_operation, self.halting, self._spent = _NO_OPERATION, True, True

    def _check_budget(self) -> None:
        if self.budget.passed(self.recorded, self.budget.clock() - self.started):
            # the switch waits for the end of this operation (see :meth:`plain`)
            self._last_operation, self.halting, self._spent = _operation_frame(), True, True

    def room(self, n: int) -> bool:
        """Whether ``n`` more instructions keep the recording within its budget of
        instructions. An operation that records many at once (``np.stack`` of a long list,
        ``np.tile``) asks first: when they do not fit, it calls :meth:`stop` and runs as
        NumPy's one call, so capture never passes its budget by a whole operation.

        Examples
        --------
        >>> rec = Recorder()
        >>> rec.start(CaptureBudget(instructions=10))
        >>> rec.room(10), rec.room(11)
        (True, False)
        """
        return self.stopped is False and self.recorded + n <= self.budget.instructions

    def plain(self) -> bool:
        """Whether the operation starting now runs as plain NumPy: capture has stopped, or
        its budget is spent and this is not the operation that spent it (capture stops
        now, before the operation does anything). Every operation asks first when
        ``halting``, so the recorded program never holds part of one; a long batch is cut
        there too (see :meth:`_cut_here`)."""
        if self.stopped:
            return True
        frame = _operation_frame()
        if self._spent:
            if frame is self._last_operation:
                return False
            self.stop()
            return True
        # the frame itself, not its id: CPython reuses a freed frame's memory for the next
        # call, so ids would not tell one operation from the next. Held until the next
        # operation asks, it keeps this one's operands (their DELs come then, in this batch)
        if self._cut_pending and frame is not self._asked:
            self._asked = frame
            if self._cut_here():
                self._cut()
        return False

    def _cut_here(self) -> bool:
        """Whether the open batch, past its length, is cut before the operation starting
        now. The first time at once: where the user's code is then (a code object and a
        bytecode offset: a one-line loop body holds several operations) becomes the cut
        site. Later, where the user's code crosses the cut site again: in the frame running
        the site's code, the previous operation was before the site and this one is at it
        or past it (an operation that records nothing may not ask), or the loop jumped back
        to it. Anywhere once the batch is twice its length (a loop that left the cut site
        behind: the gas)."""
        if self._cut_site is None or len(self.current) >= 2 * self.budget.batch_instructions:
            self._cut_site = user_site(self.filename)
            return True
        code, site = self._cut_site
        here = user_site(self.filename, code)
        if here is None:
            return False
        at, before = here[1], self._before
        self._before = at
        if before is None:   # the first question since the batch passed its length
            return at == site
        return before < site <= at or site <= at < before

    def _cut(self) -> None:
        """Close the open batch between two operations. Nothing is SYNCed: the arrays live
        on into the next batch (a temporary that crosses the cut is stored, not contracted)."""
        self.flush()
        self.cuts += 1
        self._cut_pending, self._asked, self.halting = False, None, self._spent
        if self.cuts == 1:
            self.notice(NoticeKind.BATCH, f"the recorded instructions passed {int(self.budget.batch_instructions):,} "
                        "in one batch: it is cut here, and again each time the code comes back to this line with "
                        "as many recorded (a batch's graph and searches grow with the square of its length; "
                        "whole iterations per batch make the batches alike, each partitioned once)")

    def cell_done(self) -> None:
        """The user's code ran to its end within the budget's last operation: nothing
        more to stop (a long batch is still cut at the next cell's first operation)."""
        self._last_operation, self._spent = None, False
        self._asked = None
        self.halting = self.stopped or self._cut_pending

    def stop(self) -> None:
        """Stop recording between two operations: SYNC every live base the program wrote
        (the recorded part's results), close the batch and say so; from now on traced
        arrays do plain NumPy's operations on their real values (``stopped``)."""
        seconds = self.budget.clock() - self.started
        line = user_line()
        # the last operation's frame kept its operands alive: freed now, their DELs are recorded
        self._last_operation = _NO_OPERATION
        for name in sorted(self.written):
            h = self.handles.get(name)
            if h is not None and h.real is not None:
                self.current.append(Instruction(Opcode.SYNC, (), (self.full_views[name],)))
                self.stop_synced.append(name)
                if h.real.size <= _KEPT_AT_STOP:
                    self.stop_values[name] = np.array(h.real, copy=True)
        self.flush()
        self.active, self.stopped, self._last_operation = False, True, None
        self.plain_lines.clear()
        self.notice(NoticeKind.BUDGET, f"capture stopped after {self.recorded:,} instructions and {seconds:.1f} s "
                    f"(its budget: {self.budget.describe()}): from this line on the cell ran as plain NumPy, and "
                    "the program explored is the part recorded before it (raise the budget with "
                    "`--capture-budget SECONDS --capture-instructions N` of `%%fuse`, `%fuse_config` or "
                    "`fusionlab capture`; `inf` for no limit)", line)

    def _count_scalar(self, n: int = 1) -> None:
        line = self._loop_line()
        if line is None:
            return
        self.scalar_lines[line] += n
        count = self.scalar_lines[line]
        if count >= SCALAR_LOOP_THRESHOLD and line not in self.plain_lines and count > self.array_lines[line]:
            self.plain_lines.add(line)
            self.notice(
                NoticeKind.SCALAR_LOOP,
                f"{count} one-element instructions from a Python loop over elements: write it "
                "with whole-array operations (`x**2` for `[x[i]**2 for i in range(len(x))]`, `np.sum(x * y)` "
                "for a loop accumulating `x[i] * y[i]`); its element reads now run as plain NumPy scalars",
                line,
            )

    def _count_array(self) -> None:
        """Count a whole-array instruction for the user's current loop and every loop around
        it: their iterations do array work, not only element reads."""
        line = self._loop_line()
        seen = 0
        while line is not None and seen < _MAX_LOOP_DEPTH:  # the budget: a bad map cannot cycle
            self.array_lines[line] += 1
            line, seen = self.loop_parents.get(line), seen + 1

    def _loop_line(self) -> int | None:
        """The first line of the innermost loop around the user's current line (the line
        itself outside loops): a loop's lines count together and get one notice."""
        line = user_line(self.filename)
        return self.loop_lines.get(line, line) if line is not None else None

    def scalar_plain(self) -> bool:
        """Whether the user's current loop runs its element reads as plain NumPy scalars."""
        return bool(self.plain_lines) and self._loop_line() in self.plain_lines

    def reload(self, h: Handle, contents: np.ndarray) -> None:
        """Record that base ``h`` holds ``contents`` now (memory changed outside the
        program): an OPAQUE instruction that writes the recorded values."""
        key = self.next_key()
        values = np.array(contents, copy=True)
        self.externals.functions[key] = lambda: values
        self.notice(NoticeKind.ALIAS, "an array's memory changed outside the program")
        self.emit(Instruction(Opcode.OPAQUE, (h.full,), (), {"name": "reload", "key": key}), checked=True)
        h.belief = contents

    def sync(self, view: View, why: str) -> None:
        """SYNC the base of ``view`` and flush: the batch so far is complete."""
        if not self.active:
            return
        self.emit(Instruction(Opcode.SYNC, (), (self.full_views[view.base.name],)), checked=True)
        self.notice(NoticeKind.SYNC, why)
        self.flush()

    def supersede(self, dead: Sequence[Instruction]) -> None:
        """Mark instructions of the open batch as made redundant by a rewrite (dropped at
        :meth:`finish` if nothing reads them); their one-element ones no longer count as
        a Python loop over elements."""
        self.superseded |= {id(ins) for ins in dead}
        self._count_scalar(-sum(1 for ins in dead if ins.outputs and ins.outputs[0].size <= 1
                                and ins.domain is not None and np.prod(ins.domain) <= 1))

    def left_value(self, value: Any, view: View) -> Any:
        """``value``, which ``view`` handed to Python (``float()``), remembered so that a
        variable holding it can be checked against the program's replay."""
        # a Python number holds a float64 exactly; one from float32 would be checked at
        # float64's precision, so it is not remembered
        if self.active and type(value) in (float, complex) and view.dtype in ("float64", "complex128"):
            self.left[id(value)] = (value, view, self.write_counts[view.base.name])
        return value

    def flush(self) -> None:
        """Close the open batch (if it has instructions)."""
        if not self.current:
            return
        self.raw.append(self.current)
        self.current = []

    def finish(self) -> dict[str, Base]:
        """Close the last batch, name every base (the user's names, else ``t0, t1, ...``
        in order of first appearance) and build the batches; returns the renaming."""
        self.flush()
        self.active = False
        self.raw = [drop_superseded(body, self.superseded) for body in self.raw]
        rename = self._final_names()
        # views by identity: a traced array's view object is reused by every instruction
        # using it, so most lookups skip hashing and each view is rebuilt once
        vmap: dict[int, View] = {}
        imap: dict[int, Instruction] = {}  # DELs and SYNCs of one base are one object
        for body in self.raw:
            used: dict[str, Base] = {}
            out = []
            for ins in body:
                got = imap.get(id(ins))
                if got is None:
                    outs = tuple(_renamed(v, rename, vmap) for v in ins.outputs)
                    ins_in = tuple(_renamed(x, rename, vmap) if isinstance(x, View) else x for x in ins.inputs)
                    got = imap[id(ins)] = Instruction(ins.opcode, outs, ins_in, ins.attrs)
                for v in got.outputs + got.views_in:
                    used.setdefault(v.base.name, v.base)
                out.append(got)
            try:
                self.batches.append(Program(tuple(used.values()), tuple(out)))
            except ProgramError as exc:  # a bug in capture, not in the user's code
                raise AssertionError(f"capture produced an invalid batch: {exc}") from exc
        self.inputs = {rename[k].name if k in rename else k: v for k, v in self.inputs.items()}
        self.stop_values = {rename[k].name if k in rename else k: v for k, v in self.stop_values.items()}
        return rename

    def _final_names(self) -> dict[str, Base]:
        order: dict[str, None] = {}
        for body in self.raw:
            for ins in body:
                for v in ins.outputs + ins.views_in:
                    order.setdefault(v.base.name, None)
        for name in self.inputs:
            order.setdefault(name, None)
        used: set[str] = set()
        final: dict[str, str] = {}
        tried: dict[str, int] = {}
        for name in order:
            label = self.labels.get(name)
            if label is not None:
                final[name] = _unique(label, used, tried)
        k = 0
        for name in order:
            if name in final:
                continue
            while f"t{k}" in used:
                k += 1
            final[name] = f"t{k}"
            used.add(final[name])
        return {name: self.bases[name] if new == name else Base(new, self.bases[name].dtype, self.bases[name].shape)
                for name, new in final.items()}

    def notice(self, kind: NoticeKind, message: str, line: int | None = None) -> None:
        """Record a notice, with the line of the user's code that caused it (``line``, or
        the line being executed)."""
        if kind is NoticeKind.SYNC:
            return  # flushes are normal; they show as batches, not as notices
        notice = Notice(kind, message, line if line is not None else user_line(self.filename))
        if notice not in self.notices:  # a loop repeats its notices: say each once
            self.notices.append(notice)


#: the largest base (elements) whose contents are kept where capture stopped
_KEPT_AT_STOP = 1 << 20
#: what :attr:`Recorder._last_operation` holds when the budget is spent before anything is
#: recorded: every operation is then a new one
_NO_OPERATION = object()


def _operation_frame() -> types.FrameType | None:
    """The outermost frame of capture's (or NumPy's) below the user's code: the operation
    of the user's being recorded (``x + y``, ``np.mean(x)``). Every call of the user's
    makes a new frame object, so it tells one operation from the next, even when a loop
    repeats the same line."""
    frame = sys._getframe(1)
    top = None
    while frame is not None and str(frame.f_globals.get("__name__", "")).startswith(_INTERNAL_MODULES):
        top, frame = frame, frame.f_back
    return top


#: loops nested deeper than this are not walked when counting whole-array instructions
_MAX_LOOP_DEPTH = 64
#: scans (instructions recorded) during which a new base is looked for among the user's names
_NAME_SCANS = 16


def _unique(label: str, used: set[str], tried: dict[str, int]) -> str:
    """``label``, or ``label_k`` with the first free ``k``; ``tried`` remembers where each
    label's search stopped (``used`` only grows): a loop's 10,000 bases named ``pos`` cost
    10,000 steps, not 50 million."""
    k = tried.get(label, 0)
    name = label if k == 0 else f"{label}_{k}"
    while name in used:
        k += 1
        name = f"{label}_{k}"
    tried[label] = k
    used.add(name)
    return name


def _renamed(v: View, rename: dict[str, Base], memo: dict[int, View]) -> View:
    got = memo.get(id(v))
    if got is None:
        base = rename.get(v.base.name, v.base)
        got = v if base is v.base else View(base, v.shape, v.strides, v.offset)
        memo[id(v)] = got
    return got


def rename_view(v: View, rename: dict[str, Base]) -> View:
    """``v`` on its renamed base (see :meth:`Recorder.finish`)."""
    return _renamed(v, rename, {})


def call_as_user(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` for a ufunc ``fn``, with its floating-point warnings
    attributed to the user's frame, as plain NumPy's are (they come from C, attributed to
    the innermost Python frame: capture's). NumPy is asked to call back instead of warning
    (``np.errstate(call=...)``, only where it would warn): the warnings filters are not
    touched, so the user's registry shows a warning once per line of theirs."""
    warn = [k for k, v in np.geterr().items() if v == "warn"]
    if not warn:
        return fn(*args, **kwargs)
    found: list[str] = []
    with np.errstate(call=lambda err, flag: found.append(err), **{k: "call" for k in warn}):
        result = fn(*args, **kwargs)
    if found:
        frame = sys._getframe(1)
        while frame is not None and str(frame.f_globals.get("__name__", "")).startswith(_INTERNAL_MODULES):
            frame = frame.f_back
        if frame is None:
            for err in found:
                warnings.warn(f"{err} encountered in {fn.__name__}", RuntimeWarning, stacklevel=2)
            return result
        glb = frame.f_globals
        for err in found:
            warnings.warn_explicit(f"{err} encountered in {fn.__name__}", RuntimeWarning, frame.f_code.co_filename,
                                   frame.f_lineno, module=glb.get("__name__", "<string>"),
                                   registry=glb.setdefault("__warningregistry__", {}))
    return result


def user_site(filename: str = CELL_FILENAME, code: types.CodeType | None = None) -> tuple[types.CodeType, int] | None:
    """Where the user's code is: the innermost frame of the cell (compiled as ``filename``),
    or of ``code`` when given, as its code object and bytecode offset (which tell apart the
    operations of one line, and order those of one loop body)."""
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code is code if code is not None else frame.f_code.co_filename == filename:
            return frame.f_code, frame.f_lasti
        frame = frame.f_back
    return None


def user_line(filename: str = CELL_FILENAME) -> int | None:
    """The line of the user's cell (compiled as ``filename``) being executed, if any."""
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_filename == filename:
            return frame.f_lineno
        frame = frame.f_back
    return None



_LOOPS = (ast.For, ast.AsyncFor, ast.While, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def loop_lines(source: str) -> dict[int, int]:
    """Each line of ``source`` inside a loop (``for``, ``while``, a comprehension) mapped to
    the first line of the innermost one; ``{}`` when the source does not parse.

    >>> loop_lines("x = 1\\nfor i in range(3):\\n    y = [j for j in\\n         range(i)]\\n")
    {2: 2, 3: 3, 4: 3}
    """
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return {}
    out: dict[int, int] = {}
    for node in ast.walk(tree):  # outer loops first: inner ones overwrite their lines
        if isinstance(node, _LOOPS):
            for line in range(node.lineno, (node.end_lineno or node.lineno) + 1):
                out[line] = node.lineno
    return out


def loop_parents(source: str) -> dict[int, int]:
    """Each loop's first line in ``source`` mapped to the first line of the innermost loop
    around it (loops at the top level are absent); ``{}`` when the source does not parse.

    >>> loop_parents("for i in range(3):\\n    for j in range(i):\\n        y = [k for k in range(j)]\\n")
    {2: 1, 3: 2}
    """
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return {}
    out: dict[int, int] = {}

    def visit(node: ast.AST, around: int | None) -> None:
        for child in ast.iter_child_nodes(node):
            inner = around
            if isinstance(child, _LOOPS):
                if around is not None and child.lineno != around:
                    out[child.lineno] = around
                inner = child.lineno
            visit(child, inner)

    visit(tree, None)
    return out
