"""A whole run as one generated function, the *driver*: every block's kernel called in order.

The per-block executor (:func:`~fusionlab.execute.numba_backend.run_plan`) returns to Python
between two kernels: views made, draws lent, DELs and SYNCs booked, the next kernel's
arguments typed by Numba's dispatcher. That costs 20-80 µs a gap (more right after a
kernel that has streamed its arrays through the caches, as Python's own objects come back
from memory), where the compiled loops of a hand-written program pay nothing. The driver
is one function for a whole run — every batch of a capture — that calls the kernels
itself: run as plain Python it keeps only the calls; compiled by Numba (``@numba.njit``,
its decorator) Python calls it once. Before each parallel kernel whose loop differs from
the last one's, it sets the dynamic schedule's chunk for that loop (its last argument
``ch``: threads times chunks per thread, 0 for Numba's static schedule).

What the storage does at run time (:class:`~fusionlab.execute.reference.Storage`:
allocation on first use, zeroing or copying an input, lent random draws, copy on write
after SYNC, reuse of freed memory) is decided here once, by walking the blocks in the
order ``run_plan`` runs them:

- a base that is never synced lives in a buffer the caller passes in (a *slot*); a freed
  base's slot serves the next base of the same type and size, as the storage's pool does;
  the caller takes the slots from the kernel cache's pool and gives them back afterwards;
- a base that is synced gets new memory each run, made by NumPy and passed in, and is
  returned: the user keeps it, so no later run may reuse it; written again after its SYNC,
  it is copied first;
- a recorded random draw lent to its base (``BlockPlan.lend``) is passed in and read in
  place, never written;
- a view is a slice of its base's flat buffer (reshaped), or ``as_strided`` when it is not
  contiguous, exactly the view ``Storage.view`` makes.

:func:`get_driver` returns the driver as data (its source and what to pass), or raises
:class:`~fusionlab.codegen.Unsupported` with the reason it cannot be built: a block NumPy
must run (an opaque call, a scan), a kernel Numba has refused, or (:class:`TooManyCalls`)
more kernel calls than ``max_calls`` — compiling a function of thousands of calls costs
more than it saves, so :class:`Driver` then runs the same driver as Python.
:class:`Driver` runs it, as Python or compiled.

Examples
--------
>>> from fusionlab import parse
>>> from fusionlab.execute.numba_backend import plan
>>> p = parse('''
... ARRAY A float64[1000]
... ARRAY T float64[1000]
... ARRAY S float64[]
... RANGE A
... MULTIPLY T, A, A
... SUM S, T, axis=None
... DEL T
... SYNC S
... ''')
>>> plans = [plan(p, [[0, 1, 2, 3, 4]], min_size=0)]
>>> print(get_driver(plans).source)  # doctest: +ELLIPSIS
@numba.njit(cache=True)
def driver(s0, m0, ch):
    # batch 1
    A = s0  # A: 1000 float64
    S = m0  # S: synced, returned (new each run)
    set_chunk(max(1, 1 // ch) if ch else 0)
    k_...(A, S[0:1], np.uint64(1000))  # block [1, 2, 3, 4, 5]
    return (S,)
>>> run = Driver(plans, Externals(), KernelCache())
>>> float(run()["S"]), run.runs
(332833500.0, 'python driver')
"""

from __future__ import annotations

import hashlib
import re
import warnings
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from ..bytecode import Base, Opcode, View
from ..codegen import KernelSource, Unsupported
from ..codegen_layout import safe_name
from ..codegen_contract import serial_library_blas
from .numba_backend import KernelCache, Plan, raised_by_data, run_plan
from .reference import Externals, Storage
from .threads import DEFAULT_CHUNKS_PER_THREAD, ThreadChoice, ThreadPolicy

__all__ = ["DriverSource", "Driver", "get_driver", "DEFAULT_MAX_CALLS", "MODES", "TooManyCalls"]

#: Runs with more kernel calls get no driver: compiling one function of thousands of calls
#: takes longer than the Python between them (see docs/backend.md for the measurement).
DEFAULT_MAX_CALLS = 128


class TooManyCalls(Unsupported):
    """A compiled driver would call more kernels than its budget (the Python driver has none)."""


@dataclass(frozen=True)
class DriverSource:
    """A driver as data: its source and what the caller passes and gets back.

    Arguments, in order: ``draws`` (recorded random values by key, flat when lent to a base,
    as recorded when a kernel reads them), ``inputs`` (the initial contents of input bases,
    flat, of the base's type), ``slots`` (buffers of (dtype, elements) for the bases that
    are never synced, reused from run to run) and ``fresh`` (new arrays each run, zeroed or
    not, for the bases that are synced). The driver returns the flat memory of each base in
    ``returns``.
    """

    source: str
    kernels: tuple[tuple[str, KernelSource], ...]   # (global name, kernel) per distinct kernel
    draws: tuple[tuple[int, bool], ...]   # (key, flat)
    inputs: tuple[Base, ...]
    slots: tuple[tuple[str, int], ...]
    fresh: tuple[tuple[str, int, bool], ...]   # (dtype, elements, zeroed): new arrays each run, returned
    returns: tuple[Base, ...]
    calls: int

    @property
    def key(self) -> str:
        """A short hash of the source (the cache's key and the file's name)."""
        return hashlib.sha1(self.source.encode()).hexdigest()[:16]


@dataclass(eq=False)
class _Inc:
    """One incarnation of a base: its memory from allocation (or lending) to its release."""

    base: Base
    init: str            # "zero", "none", "input", "copy" or "draw"
    source: "_Inc | int | None" = None   # the incarnation copied, or the draw's key
    returned: bool = False
    var: str = ""


def get_driver(plans: Sequence[Plan], externals: Externals | None = None, inputs: Sequence[str] = (),
               failed: Mapping[str, str] | None = None, max_calls: int | None = DEFAULT_MAX_CALLS,
               chunk_per_loop: bool = True) -> DriverSource:
    """The driver of a run of ``plans`` (in order, on one storage), or raise
    :class:`~fusionlab.codegen.Unsupported`.

    ``externals`` holds the recorded draws (lending needs their type and layout), ``inputs``
    names the bases whose first contents come from the caller, ``failed`` the kernels Numba
    refused (by key); ``max_calls`` caps the kernel calls (None: no cap).
    ``chunk_per_loop`` sets the dynamic schedule's chunk before each parallel loop that
    differs from the last (``set_chunk``, :func:`fusionlab.execute.threads.set_chunk`: in
    Python and compiled alike, and a compiled driver calling it is cached on disk); without
    it every loop keeps the run's one chunk.
    """
    externals = externals or Externals()
    failed = failed or {}
    input_names = set(inputs)
    cur: dict[str, _Inc] = {}
    borrowed: set[str] = set()
    final: dict[str, _Inc] = {}
    events: list[tuple[Any, ...]] = []
    calls = 0

    def ensure(base: Base, zero: bool = True) -> _Inc:
        inc = cur.get(base.name)
        if inc is None:
            inc = _Inc(base, "input" if base.name in input_names else "zero" if zero else "none")
            cur[base.name] = inc
            events.append(("new", inc))
        elif inc.base.size != base.size or inc.base.dtype != base.dtype:
            raise Unsupported(f"array {base.name} changes type or size between batches")
        return inc

    def release(name: str) -> None:
        inc = cur.pop(name, None)
        if inc is None:
            return
        if name in borrowed:   # a lent draw or a synced value: its memory is not reused
            borrowed.discard(name)
            return
        events.append(("release", inc))

    def share(base: Base) -> None:
        inc = ensure(base)
        inc.returned = True
        borrowed.add(base.name)
        final[base.name] = inc

    for k, p in enumerate(plans):
        program = p.program
        events.append(("comment", f"batch {k + 1}"))
        for bp in p.blocks:
            if bp.releases:
                for name in bp.releases:
                    release(name)
                continue
            for base, key in bp.lend:
                draw = externals.arrays.get(key)
                if draw is None or draw.dtype != base.np_dtype or draw.size != base.size \
                        or not draw.flags.c_contiguous or base.size == 0:
                    raise Unsupported(f"block {bp.numbered}: recorded draw {key} does not fit array {base.name}")
                release(base.name)
                inc = _Inc(base, "draw", key)
                cur[base.name] = inc
                borrowed.add(base.name)
                events.append(("new", inc))
            for name in sorted(bp.writes & borrowed):   # copy on write
                old = cur[name]
                borrowed.discard(name)
                cur[name] = _Inc(old.base, "copy", old)
                events.append(("new", cur[name]))
            spec = bp.compiled
            if spec is None:   # no kernel: SYNC, DEL and lent draws only
                bound = set(bp.bind)
                for i in bp.instructions:
                    ins = program[i]
                    if ins.opcode is Opcode.SYNC:
                        share(ins.views_in[0].base)
                    elif ins.opcode is Opcode.DEL:
                        release(ins.outputs[0].base.name)
                    elif i not in bound:
                        raise Unsupported(f"block {bp.numbered} runs with NumPy ({bp.reason})")
                continue
            if spec.key in failed:
                raise Unsupported(f"block {bp.numbered}: Numba could not compile its kernel ({failed[spec.key]})")
            for base in bp.fresh:
                ensure(base, zero=False)
            args = [(ensure(v.base), v) for v in spec.arguments]
            calls += 1
            if max_calls is not None and calls > max_calls:
                raise TooManyCalls(f"more than {max_calls} kernel calls: compiling one driver would cost more "
                                  "than the Python between them")
            events.append(("call", spec, args, bp.numbered))
            for base in bp.syncs:
                share(base)
            for name in bp.frees:
                release(name)
    return _emit(events, final, calls, chunk_per_loop)


def _emit(events: list[tuple[Any, ...]], final: dict[str, _Inc], calls: int, chunk_per_loop: bool = True) -> DriverSource:
    """The driver's source from the walk's events: names, slots, statements."""
    used: set[str] = {"np", "numba", "as_strided", "driver", "ch", "set_chunk"}
    kernels: dict[str, tuple[str, KernelSource]] = {}
    for ev in events:
        if ev[0] == "call" and ev[1].key not in kernels:
            kernels[ev[1].key] = (f"k_{ev[1].key}", ev[1])
            used.add(f"k_{ev[1].key}")

    # the driver's own names: draws r0/q0, inputs in_0, slots s0, new arrays m0, kernels k_<hash>
    reserved = re.compile(r"(r|q|s|m|in_)\d+|k_\w+")

    def fresh_name(stem: str) -> str:
        stem = re.sub(r"\W", "_", stem)
        stem = stem if stem[:1].isalpha() else f"a_{stem}"
        if reserved.fullmatch(stem) or reserved.fullmatch(f"{stem}_1"):
            # an array named k (k_1, k_2, ... look like kernels) or s0: numbering alone
            # would never leave the reserved names (the loop below ran forever)
            stem = f"v_{stem}"
        name, n = stem, 1
        while name in used or reserved.fullmatch(name):
            name, n = f"{stem}_{n}", n + 1
        used.add(name)
        return name

    draws: dict[tuple[int, bool], str] = {}
    inputs: dict[str, tuple[Base, str]] = {}
    slots: list[tuple[str, int]] = []
    fresh: list[tuple[str, int, bool]] = []
    free: dict[tuple[str, int], list[int]] = {}
    slot_of: dict[int, int] = {}
    body: list[str] = []
    chunked_for = 0   # the parallel loop the schedule's chunk was last set for

    def draw_arg(key: int, flat: bool) -> str:
        if (key, flat) not in draws:
            draws[(key, flat)] = f"r{key}" if flat else f"q{key}"
        return draws[(key, flat)]

    for ev in events:
        if ev[0] == "comment":
            body.append(f"# {ev[1]}")
        elif ev[0] == "new":
            inc = ev[1]
            base = inc.base
            inc.var = fresh_name(safe_name(base.name))
            n = max(base.size, 1)
            if inc.init == "draw":
                body.append(f"{inc.var} = {draw_arg(inc.source, True)}  # {base.name}: recorded draw {inc.source}, lent")
                continue
            if inc.returned:
                # new memory each run, made by NumPy (which asks for huge pages for large
                # arrays: Numba's own allocations measured up to 40% slower kernels at `large`)
                zero = inc.init == "zero" or inc.init == "input" and n != base.size
                fresh.append((base.dtype, n, zero))
                body.append(f"{inc.var} = m{len(fresh) - 1}  # {base.name}: synced, returned (new each run)")
                if inc.init == "copy":
                    body.append(f"{inc.var}[:] = {inc.source.var}  # copied before it is written")
            else:
                key = (base.dtype, n)
                if free.get(key):
                    s = free[key].pop()
                else:
                    s = len(slots)
                    slots.append(key)
                slot_of[id(inc)] = s
                body.append(f"{inc.var} = s{s}  # {base.name}: {n} {base.dtype}")
                if inc.init == "zero" or inc.init == "input" and n != base.size:
                    body.append(f"{inc.var}[:] = 0")
                elif inc.init == "copy":
                    body.append(f"{inc.var}[:] = {inc.source.var}  # copied before it is written")
            if inc.init == "input":
                if base.name not in inputs:
                    inputs[base.name] = (base, f"in_{len(inputs)}")
                elif inputs[base.name][0].dtype != base.dtype:
                    raise Unsupported(f"input {base.name} changes type between batches")
                body.append(f"{inc.var}[:{base.size}] = {inputs[base.name][1]}  # {base.name}: the input")
        elif ev[0] == "release":
            s = slot_of.pop(id(ev[1]), None)
            if s is not None:
                free.setdefault(slots[s], []).append(s)
        elif ev[0] == "call":
            spec, args, numbered = ev[1], ev[2], ev[3]
            if chunk_per_loop and spec.parallel_iterations and spec.parallel_iterations != chunked_for:
                # the chunk of the dynamic schedule follows this loop, not the run's
                # shortest: a 245-chunk reduction's chunk of 30 handed a million-element
                # map out in 33,000 pieces (15 times slower, docs/backend.md)
                chunked_for = spec.parallel_iterations
                body.append(f"set_chunk(max(1, {chunked_for} // ch) if ch else 0)")
            exprs = [_view(inc.var, max(inc.base.size, 1), v) for inc, v in args]
            exprs += [draw_arg(k, False) for k in spec.randoms]
            exprs += [f"np.uint64({n})" for n in spec.extents + spec.offsets]   # offsets: kernel arguments
            body.append(f"{kernels[spec.key][0]}({', '.join(exprs)})  # block {list(numbered)}")
    returns = [final[name] for name in final]
    draw_order = sorted(draws, key=lambda d: (d[0], not d[1]))
    params = [draws[d] for d in draw_order] + [name for _, name in inputs.values()] + \
        [f"s{k}" for k in range(len(slots))] + [f"m{k}" for k in range(len(fresh))] + ["ch"]
    lines = ["@numba.njit(cache=True)", f"def driver({', '.join(params)}):"]
    lines += [f"    {line}" for line in body]
    lines.append(f"    return ({''.join(f'{inc.var}, ' for inc in returns).rstrip(', ')}{',' if len(returns) == 1 else ''})")
    return DriverSource(
        "\n".join(lines), tuple(kernels.values()), tuple(draw_order), tuple(b for b, _ in inputs.values()),
        tuple(slots), tuple(fresh), tuple(inc.base for inc in returns), calls,
    )


def _view(var: str, flat_size: int, v: View) -> str:
    """``Storage.view(v)`` on the flat buffer ``var``, as a Numba expression (a
    zero-dimensional view as one element: the kernel indexes it ``[0]``)."""
    shape = tuple(v.shape)
    if v.ndim == 0:
        return f"{var}[{v.offset}:{v.offset + 1}]"
    if v.covers_base and flat_size == v.size:
        return var if v.ndim == 1 else f"{var}.reshape({shape!r})"
    c_strides = [1] * v.ndim
    for j in range(v.ndim - 2, -1, -1):
        c_strides[j] = c_strides[j + 1] * shape[j + 1]
    if all(n == 1 or s == c for n, s, c in zip(shape, v.strides, c_strides)):   # a contiguous stretch
        flat = f"{var}[{v.offset}:{v.offset + v.size}]"
        return flat if v.ndim == 1 else f"{flat}.reshape({shape!r})"
    item = v.base.np_dtype.itemsize
    strides = tuple(s * item for s in v.strides)
    return f"as_strided({var}[{v.offset}:], {shape!r}, {strides!r})"


#: How a run's kernels are called: its driver run by the Python interpreter, its driver
#: compiled by Numba, or block by block (``run_plan``)
MODES = ("python", "numba", "blocks")


@dataclass
class Driver:
    """A run of ``plans`` on one storage, called once per run; returns the synced arrays,
    as ``run_plan`` does.

    ``mode``:

    - ``"python"`` (default): the driver's source runs as plain Python — the per-block
      bookkeeping is gone (decided once, in :func:`get_driver`), only the kernel calls
      remain; nothing is compiled beyond the kernels;
    - ``"numba"``: the driver is compiled too, so Python calls one function per run. The
      compilation re-optimises every kernel it calls (Numba links them into the driver):
      seconds for dozens of kernels, paid once per program and then cached on disk;
    - ``"blocks"``: block by block from Python (``run_plan``), as when no driver can be built.

    When no driver can be built, ``reason`` says why and the run goes block by block. If
    Numba refuses the compiled driver, the run falls back to block by block for good, with
    a ``RuntimeWarning`` (a kernel Numba refuses warns for its own block instead).
    """

    plans: Sequence[Plan]
    externals: Externals
    cache: KernelCache
    inputs: Mapping[str, np.ndarray] = field(default_factory=dict)
    mode: str = "python"
    max_calls: int = DEFAULT_MAX_CALLS
    #: Numba threads for the parallel kernels: None sizes them to the cores free at each
    #: run's start (:func:`fusionlab.execute.threads.configure`)
    threads: int | None = None
    #: parallel loops split into this many chunks per thread, handed out dynamically (0 or
    #: 1: Numba's static schedule, one share per thread)
    chunks_per_thread: int = DEFAULT_CHUNKS_PER_THREAD
    #: what the last run used (threads, chunk size, why)
    choice: ThreadChoice | None = field(init=False, default=None)
    spec: DriverSource | None = field(init=False, default=None)
    reason: str = field(init=False, default="")
    _fn: Any = field(init=False, default=None)
    _args: tuple[Any, ...] = field(init=False, default=())
    # dtypes made once: parsing a type's name costs microseconds on every call
    _slot_types: list[tuple[np.dtype, int]] = field(init=False, default_factory=list)
    _fresh_types: list[tuple[np.dtype, int, bool]] = field(init=False, default_factory=list)
    _outer: int = field(init=False, default=0)
    _policy: ThreadPolicy = field(init=False, default_factory=ThreadPolicy)
    _library_blas: bool = field(init=False, default=False)

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, not {self.mode!r}")
        # the chunk size of the dynamic schedule follows the shortest parallel loop
        loops = [k.parallel_iterations for p in self.plans for bp in p.blocks
                 for k in (bp.kernel, bp.serial) if k is not None and k.parallel_iterations]
        self._outer = min(loops, default=0)
        self._library_blas = any(k.library_blas for p in self.plans for bp in p.blocks
                                 for k in (bp.kernel, bp.serial) if k is not None)
        self._policy = ThreadPolicy(self.threads, self.chunks_per_thread)
        if self.mode == "blocks":
            self.reason = "asked for"
            return
        try:
            self.spec = get_driver(self.plans, self.externals, list(self.inputs), self.cache.failed,
                                   self.max_calls if self.mode == "numba" else None)
        except TooManyCalls as exc:
            # too long to compile: the same driver runs as Python, which still skips the
            # per-block bookkeeping (LU or Gaussian elimination in Python loops: thousands of calls)
            try:
                self.spec = get_driver(self.plans, self.externals, list(self.inputs), self.cache.failed, None)
            except Unsupported as later:   # a block past the 128th call runs with NumPy
                self.reason = f"{exc}; {later}"
                return
            self.reason = f"{exc}; its Python form runs"
            self.mode = "python"
        except Unsupported as exc:
            self.reason = str(exc)
            return
        args: list[Any] = []
        for key, flat in self.spec.draws:
            draw = self.externals.arrays[key]
            args.append(draw.reshape(-1) if flat else draw)
        for base in self.spec.inputs:
            args.append(np.ascontiguousarray(np.asarray(self.inputs[base.name], dtype=base.np_dtype).reshape(-1)))
        self._args = tuple(args)
        self._slot_types = [(np.dtype(d), n) for d, n in self.spec.slots]
        self._fresh_types = [(np.dtype(d), n, zero) for d, n, zero in self.spec.fresh]

    @property
    def runs(self) -> str:
        """What a call runs: "python driver", "compiled driver" or "block by block"."""
        return "block by block" if self.spec is None else \
            "compiled driver" if self.mode == "numba" else "python driver"

    def __call__(self) -> dict[str, np.ndarray]:
        # BLAS tiles call SciPy's OpenBLAS inside parallel loops: one BLAS thread while the
        # run lasts, the user's count back after it
        with serial_library_blas(self._library_blas):
            return self._run()

    def _run(self) -> dict[str, np.ndarray]:
        # Every run sets the thread count and schedule, which also launches Numba's thread
        # pool: a compiled driver loaded from Numba's disk cache does not launch it when it
        # was compiled in a process whose kernels came from the cache (their libraries lose
        # the parallel back end's reload hook, and the driver inherits the empty list), and
        # its first parallel kernel then calls into a pool that was never started: the
        # segmentation fault of issue 13.
        self.choice = self._policy.apply(self._outer)
        spec = self.spec
        if spec is None:
            return self._blocks()
        pool = self.cache.pool
        slots = [pool.take(key) for key in spec.slots]
        slots = [s if s is not None else np.empty(n, dtype=t) for s, (t, n) in zip(slots, self._slot_types)]
        fresh = [np.zeros(n, dtype=t) if zero else np.empty(n, dtype=t) for t, n, zero in self._fresh_types]
        try:
            if self._fn is None:
                fn = self.cache.get_driver(spec)
                self._fn = fn if self.mode == "numba" else fn.py_func   # py_func: the same source, not compiled
            # chunks per parallel loop (threads x chunks per thread; 0: static schedule)
            ch = self.choice.threads * self.chunks_per_thread if self.choice.chunksize else 0
            out = self._fn(*self._args, *slots, *fresh, ch)
        except Exception as exc:  # Numba's typing or lowering errors come in many classes
            if raised_by_data(exc):   # the data's error (NumPy's): the driver stays usable
                raise
            return self._fall_back(exc)
        finally:
            for key, s in zip(spec.slots, slots):
                pool.give(key, s)
        return {base.name: a[: base.size].reshape(base.shape) for base, a in zip(spec.returns, out)}

    def _fall_back(self, exc: Exception) -> dict[str, np.ndarray]:
        """Block by block from now on; warn unless a block's own warning says why."""
        message = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else type(exc).__name__
        self.reason = f"the {self.runs} failed ({message})"
        self.spec = None
        before = len(self.cache.failed)
        synced = self._blocks()
        if len(self.cache.failed) == before:
            warnings.warn(f"{self.reason}; running block by block", RuntimeWarning, stacklevel=3)
        return synced

    def _blocks(self) -> dict[str, np.ndarray]:
        storage = Storage(self.inputs, pool=self.cache.pool)
        synced: dict[str, np.ndarray] = {}
        ch = self.choice.threads * self.chunks_per_thread if self.choice is not None and self.choice.chunksize else 0
        for p in self.plans:
            synced.update(run_plan(p, storage, self.externals, self.cache, chunks=ch))
        return synced
