"""A whole run as one generated function, the *driver*: every block's kernel called in order.

The per-block executor (:func:`~fusionlab.backend.numba.plan.run_plan`) returns to Python
between two kernels: views made, draws lent, DELs and SYNCs booked, the next kernel's
arguments typed by Numba's dispatcher. That costs 20-80 µs a gap (more right after a
kernel that has streamed its arrays through the caches, as Python's own objects come back
from memory), where the compiled loops of a hand-written program pay nothing. The driver
is one function for a whole run — every batch of a capture — that calls the kernels
itself: run as plain Python it keeps only the calls; compiled by Numba (``@numba.njit``,
its decorator) Python calls it once. Before each parallel kernel whose loop differs from
the last one's, it sets the dynamic schedule's chunk for that loop (its last argument
``ch``: threads times chunks per thread, 0 for Numba's static schedule).

What the storage does at run time (:class:`~fusionlab.runtime.reference.Storage`:
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
:class:`~fusionlab.backend.numba.codegen.Unsupported` with the reason it cannot be built: a block NumPy
must run (an opaque call, a scan), a kernel Numba has refused, or (:class:`TooManyCalls`)
more call sites than ``max_calls`` after repeated calls are folded into loops over tables
(:mod:`.driver_loops`: the source grows with the distinct statements, not the calls) —
compiling hundreds of call sites costs more than it saves, so :class:`Driver` then runs
the same driver as Python.
:class:`Driver` runs it, as Python or compiled.

Examples
--------
>>> from fusionlab import parse
>>> from fusionlab.backend.numba.plan import plan
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
def driver(ar0, m0, ch):
    # batch 1
    x0 = ar0[0:1000]  # A: 1000 float64
    x1 = m0[0]  # S: synced, returned (new each run)
    set_chunk(max(1, 1 // ch) if ch else 0)
    k_...(x0, x1[0:1], np.uint64(1000))  # block [1, 2, 3, 4, 5]
    return ()
>>> run = Driver(plans, Externals(), KernelCache())
>>> float(run()["S"]), run.runs
(332833500.0, 'python driver')
"""

from __future__ import annotations

import enum
import hashlib
import re
import warnings
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from fusionlab.ir.bytecode import Base, Opcode, View
from fusionlab.backend.numba.codegen import KernelSource, Unsupported, constant_text
from fusionlab.backend.numba.layout import safe_name
from fusionlab.backend.numba.contract import serial_library_blas
from fusionlab.backend.numba.driver_loops import TABLE_NAME, fold
from fusionlab.backend.numba.guards import RecordedSizeMismatch, SizeFallback
from fusionlab.backend.numba.plan import KernelCache, Plan, run_plan
from fusionlab.runtime.reference import Externals, Storage
from fusionlab.backend.numba.threads import DEFAULT_CHUNKS_PER_THREAD, ThreadChoice, ThreadPolicy

__all__ = ["DriverSource", "Driver", "Runs", "get_driver", "DEFAULT_MAX_CALLS", "MODES", "TooManyCalls"]

#: Drivers with more kernel call sites (after folding repeated calls into loops) are not
#: compiled: 201 call sites compiled in 1.85 s of CPU, about 9 ms a site and growing, while a
#: compiled call saves 0.8 µs over the Python driver's (docs/backend.md, "Loops over call
#: tables"; benchmarks/bench_driver_compile.py).
DEFAULT_MAX_CALLS = 256


class TooManyCalls(Unsupported):
    """A compiled driver would have more call sites than its budget (the Python driver has
    none); ``spec`` is the driver, for its Python form."""

    def __init__(self, message: str, spec: "DriverSource | None" = None) -> None:
        super().__init__(message)
        self.spec = spec


class Runs(enum.Enum):
    """What a run's call runs: its driver (as Python or compiled), the blocks one by one, or
    NumPy alone (a size recorded from the data did not hold)."""

    PYTHON_DRIVER = "python driver"
    COMPILED_DRIVER = "compiled driver"
    BLOCKS = "block by block"
    NUMPY = "NumPy"

    @property
    def driven(self) -> bool:
        """Whether the run's driver calls the kernels (it calls a block's serial kernel
        where block by block NumPy runs the block)."""
        return self in (Runs.PYTHON_DRIVER, Runs.COMPILED_DRIVER)


@dataclass(frozen=True)
class DriverSource:
    """A driver as data: its source and what the caller passes and gets back.

    Arguments, in order: ``draws`` (recorded random values by key, flat when lent to a base,
    as recorded when a kernel reads them), ``inputs`` (the initial contents of input bases,
    flat, of the base's type), ``slots`` (buffers of (dtype, elements) for the bases that
    are never synced, reused from run to run), ``fresh`` (new 2-D arrays each run, zeroed or
    not, whose rows hold the bases that are synced), ``tables`` (the loops' integers,
    :mod:`.driver_loops`) and ``ch``. The driver returns nothing: each base of ``returns``
    is a row of a new array or a lent draw, as ``returned`` says, which the caller holds.
    """

    source: str
    kernels: tuple[tuple[str, KernelSource], ...]   # (global name, kernel) per distinct kernel
    draws: tuple[tuple[int, bool], ...]   # (key, flat)
    inputs: tuple[Base, ...]
    slots: tuple[tuple[str, int], ...]
    #: (dtype, elements, zeroed, rows): new 2-D arrays each run, whose rows are returned
    fresh: tuple[tuple[str, int, bool, int], ...]
    returns: tuple[Base, ...]
    calls: int
    #: where each of ``returns`` is: ("fresh", array, row) or ("draw", key, 0)
    returned: tuple[tuple[str, int, int], ...] = ()
    #: the loops' tables (:mod:`.driver_loops`): rows of integers, passed after the new arrays
    tables: tuple[tuple[tuple[int, ...], ...], ...] = ()
    #: kernel calls in the source (a loop's counted once): what its compilation grows with
    call_sites: int = 0
    #: small inputs packed by type: (dtype, elements, ((base, offset), ...)) per packed array,
    #: passed after ``inputs``
    packed_inputs: tuple[tuple[str, int, tuple[tuple[Base, int], ...]], ...] = ()
    #: how many of ``slots`` are buffers of one base (``s0, s1, ...``); the rest are arenas
    #: of small buffers of one type (``ar0, ar1, ...``), taken from the pool alike
    own_slots: int = 0

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
    :class:`~fusionlab.backend.numba.codegen.Unsupported`.

    ``externals`` holds the recorded draws (lending needs their type and layout), ``inputs``
    names the bases whose first contents come from the caller, ``failed`` the kernels Numba
    refused (by key); ``max_calls`` caps the kernel call sites after folding (None: no cap).
    ``chunk_per_loop`` sets the dynamic schedule's chunk before each parallel loop that
    differs from the last (``set_chunk``, :func:`fusionlab.backend.numba.threads.set_chunk`: in
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
            events.append(("call", spec, args, bp.numbered))
            for base in bp.syncs:
                share(base)
            for name in bp.frees:
                release(name)
    out = _emit(events, final, calls, chunk_per_loop)
    if max_calls is not None and out.call_sites > max_calls:
        raise TooManyCalls(f"more than {max_calls} kernel call sites after folding repeated calls into loops "
                           f"({out.call_sites} for {calls} calls): compiling one driver would cost more than "
                           "the Python between them", out)
    return out


#: A synced array of at most this many bytes shares one 2-D array (made by NumPy each run)
#: with the others of its type, size and zeroing, as one of its rows: the row is an integer,
#: which a loop's table can hold, so batches that each sync a small value (a pivot) fold into
#: one loop. Larger arrays keep arrays of their own: a user holding one row would keep the
#: whole group alive.
GROUP_BYTES = 1 << 16


class _Names:
    """The driver's variable names, ``x0, x1, ...``, allocated as registers are: a name is
    free again after its incarnation's last use, and a new incarnation takes the lowest free
    name of its type. So repeated batches name their arrays alike and fold into loops
    (:mod:`.driver_loops`) — capture names the same temporary of each batch differently —
    and a name never holds two types (Numba types a variable once)."""

    def __init__(self) -> None:
        self.count = 0
        self.free: dict[str, list[str]] = {}
        self.dtype_of: dict[str, str] = {}

    def take(self, dtype: str) -> str:
        pool = self.free.get(dtype)
        if pool:
            name = min(pool, key=lambda v: int(v[1:]))
            pool.remove(name)
            return name
        name = f"x{self.count}"
        self.count += 1
        self.dtype_of[name] = dtype
        return name

    def give(self, name: str) -> None:
        self.free.setdefault(self.dtype_of[name], []).append(name)


class _Arenas:
    """Small buffers of one type packed into one flat array (an *arena*) at aligned offsets,
    so that a buffer is an arena's slice whose bounds are integers a loop's table can hold;
    large buffers stay arrays of their own. ``prefix`` names the arrays."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.arenas: list[list[Any]] = []   # [dtype, elements]
        self.of: dict[str, int] = {}

    def place(self, dtype: str, n: int) -> tuple[int, int]:
        """A new region of ``n`` elements: (arena, offset)."""
        if dtype not in self.of:
            self.of[dtype] = len(self.arenas)
            self.arenas.append([dtype, 0])
        j = self.of[dtype]
        item = np.dtype(dtype).itemsize
        align = max(1, 64 // item) if 64 % item == 0 else 1   # cache-line aligned slices
        at = -(-self.arenas[j][1] // align) * align
        self.arenas[j][1] = at + n
        return j, at

    def expr(self, j: int, at: int, n: int) -> str:
        return f"{self.prefix}{j}[{at}:{at + n}]"


def _small(dtype: str, n: int) -> bool:
    return n * np.dtype(dtype).itemsize <= GROUP_BYTES


def _last_uses(events: list[tuple[Any, ...]]) -> dict[int, int]:
    """The index of the last event that reads each incarnation (by id)."""
    last: dict[int, int] = {}
    for i, ev in enumerate(events):
        if ev[0] == "new":
            last[id(ev[1])] = i
            if ev[1].init == "copy":
                last[id(ev[1].source)] = i
        elif ev[0] == "call":
            for inc, _ in ev[2]:
                last[id(inc)] = i
    return last


class _Memory:
    """Where the driver's arrays live: draws, inputs (small ones packed by type), slots
    (small ones slices of an arena per type), rows of new arrays; and the parameters that
    pass them in."""

    def __init__(self) -> None:
        self.draws: dict[tuple[int, bool], str] = {}
        self.inputs: dict[str, tuple[Base, str]] = {}
        self.packed_in = _Arenas("inp")
        self.packed_at: dict[str, tuple[Base, int, int]] = {}   # a small input: (base, arena, offset)
        self.slots: list[tuple[str, int]] = []
        self.arenas = _Arenas("ar")
        self.fresh: list[list[Any]] = []   # [dtype, elements, zeroed, rows]
        self.groups: dict[tuple[str, int, bool], int] = {}
        self.free: dict[tuple[str, int], list[str]] = {}   # freed buffers by (dtype, elements)
        self.buffer_of: dict[int, tuple[tuple[str, int], str]] = {}

    def draw_arg(self, key: int, flat: bool) -> str:
        if (key, flat) not in self.draws:
            self.draws[(key, flat)] = f"r{key}" if flat else f"q{key}"
        return self.draws[(key, flat)]

    def buffer(self, inc: _Inc, n: int) -> str:
        """A buffer of ``n`` elements for ``inc``: one freed before, or a new one."""
        key = (inc.base.dtype, n)
        if self.free.get(key):   # the first freed: the same choice in every repetition of a batch
            expr = self.free[key].pop(0)
        elif _small(*key):
            expr = self.arenas.expr(*self.arenas.place(*key), n)
        else:
            self.slots.append(key)
            expr = f"s{len(self.slots) - 1}"
        self.buffer_of[id(inc)] = (key, expr)
        return expr

    def release(self, inc: _Inc) -> None:
        got = self.buffer_of.pop(id(inc), None)
        if got is not None:
            self.free.setdefault(got[0], []).append(got[1])

    def row(self, dtype: str, n: int, zero: bool) -> tuple[int, int]:
        """A row of a new array each run: (array, row)."""
        gkey = (dtype, n, zero)
        if gkey in self.groups:
            g = self.groups[gkey]
            self.fresh[g][3] += 1
        else:
            g = len(self.fresh)
            self.fresh.append([dtype, n, zero, 1])
            if _small(dtype, n):
                self.groups[gkey] = g
        return g, self.fresh[g][3] - 1

    def input_expr(self, base: Base) -> str:
        if _small(base.dtype, base.size):
            if base.name not in self.packed_at:
                self.packed_at[base.name] = (base, *self.packed_in.place(base.dtype, base.size))
            elif self.packed_at[base.name][0].dtype != base.dtype:
                raise Unsupported(f"input {base.name} changes type between batches")
            _, j, at = self.packed_at[base.name]
            return self.packed_in.expr(j, at, base.size)
        if base.name not in self.inputs:
            self.inputs[base.name] = (base, f"in_{len(self.inputs)}")
        elif self.inputs[base.name][0].dtype != base.dtype:
            raise Unsupported(f"input {base.name} changes type between batches")
        return self.inputs[base.name][1]

    def draw_order(self) -> list[tuple[int, bool]]:
        return sorted(self.draws, key=lambda d: (d[0], not d[1]))

    def params(self, tables: int) -> list[str]:
        return [self.draws[d] for d in self.draw_order()] + [name for _, name in self.inputs.values()] + \
            [f"inp{j}" for j in range(len(self.packed_in.arenas))] + [f"s{k}" for k in range(len(self.slots))] + \
            [f"ar{j}" for j in range(len(self.arenas.arenas))] + [f"m{k}" for k in range(len(self.fresh))] + \
            [f"{TABLE_NAME}{k}" for k in range(tables)] + ["ch"]

    def packed_inputs(self) -> tuple[tuple[str, int, tuple[tuple[Base, int], ...]], ...]:
        return tuple((d, n, tuple((base, at) for base, j, at in self.packed_at.values() if j == k))
                     for k, (d, n) in enumerate(self.packed_in.arenas))


def _bind(inc: _Inc, mem: _Memory, where: dict[int, tuple[str, int, int]]) -> list[str]:
    """The statements that give a new incarnation its memory (its name already taken)."""
    base = inc.base
    n = max(base.size, 1)
    if inc.init == "draw":
        where[id(inc)] = ("draw", inc.source, 0)
        return [f"{inc.var} = {mem.draw_arg(inc.source, True)}  # {base.name}: recorded draw {inc.source}, lent"]
    out = []
    if inc.returned:
        # new memory each run, made by NumPy (which asks for huge pages for large
        # arrays: Numba's own allocations measured up to 40% slower kernels at `large`)
        g, row = mem.row(base.dtype, n, inc.init == "zero" or inc.init == "input" and n != base.size)
        where[id(inc)] = ("fresh", g, row)
        out.append(f"{inc.var} = m{g}[{row}]  # {base.name}: synced, returned (new each run)")
    else:
        out.append(f"{inc.var} = {mem.buffer(inc, n)}  # {base.name}: {n} {base.dtype}")
        if inc.init == "zero" or inc.init == "input" and n != base.size:
            out.append(f"{inc.var}[:] = 0")
    if inc.init == "copy":
        out.append(f"{inc.var}[:] = {inc.source.var}  # copied before it is written")
    if inc.init == "input":
        out.append(f"{inc.var}[:{base.size}] = {mem.input_expr(base)}  # {base.name}: the input")
    return out


def _emit(events: list[tuple[Any, ...]], final: dict[str, _Inc], calls: int, chunk_per_loop: bool = True) -> DriverSource:
    """The driver's source from the walk's events: names, memory, statements, loops."""
    kernels: dict[str, tuple[str, KernelSource]] = {}
    for ev in events:
        if ev[0] == "call" and ev[1].key not in kernels:
            kernels[ev[1].key] = (f"k_{ev[1].key}", ev[1])
    last = _last_uses(events)
    dies: dict[int, list[_Inc]] = {}
    for ev in events:
        if ev[0] == "new":
            dies.setdefault(last[id(ev[1])], []).append(ev[1])
    names = _Names()
    mem = _Memory()
    where: dict[int, tuple[str, int, int]] = {}   # a returned incarnation: ("fresh", array, row) or ("draw", key, 0)
    body: list[str] = []
    chunked_for = 0   # the parallel loop the schedule's chunk was last set for
    for i, ev in enumerate(events):
        if ev[0] == "comment":
            body.append(f"# {ev[1]}")
        elif ev[0] == "new":
            ev[1].var = names.take(ev[1].base.dtype)
            body += _bind(ev[1], mem, where)
        elif ev[0] == "release":
            mem.release(ev[1])
        elif ev[0] == "call":
            spec, args, numbered = ev[1], ev[2], ev[3]
            if chunk_per_loop and spec.parallel_iterations and spec.parallel_iterations != chunked_for:
                # the chunk of the dynamic schedule follows this loop, not the run's
                # shortest: a 245-chunk reduction's chunk of 30 handed a million-element
                # map out in 33,000 pieces (15 times slower, docs/backend.md)
                chunked_for = spec.parallel_iterations
                body.append(f"set_chunk(max(1, {chunked_for} // ch) if ch else 0)")
            exprs = [_view(inc.var, max(inc.base.size, 1), v) for inc, v in args]
            exprs += [mem.draw_arg(k, False) for k in spec.randoms]
            exprs += [f"np.uint64({n})" for n in spec.extents + spec.offsets]   # offsets: kernel arguments
            exprs += [constant_text(c) for c in spec.constants]
            body.append(f"{kernels[spec.key][0]}({', '.join(exprs)})  # block {list(numbered)}")
        for inc in dies.pop(i, ()):   # after its last use, its name serves the next array of its type
            names.give(inc.var)
    folded = fold(body)
    returns = list(final.values())
    lines = ["@numba.njit(cache=True)", f"def driver({', '.join(mem.params(len(folded.tables)))}):"]
    lines += [f"    {line}" for line in folded.lines]
    # the synced arrays are the caller's (rows of its new arrays, or lent draws): nothing to return
    lines.append("    return ()")
    return DriverSource(
        "\n".join(lines), tuple(kernels.values()), tuple(mem.draw_order()),
        tuple(b for b, _ in mem.inputs.values()), tuple(mem.slots) + tuple((d, n) for d, n in mem.arenas.arenas),
        tuple((d, n, z, r) for d, n, z, r in mem.fresh), tuple(inc.base for inc in returns), calls,
        tuple(where[id(inc)] for inc in returns), folded.tables, folded.call_sites, mem.packed_inputs(),
        len(mem.slots),
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
    # as_strided checks nothing: the elements the view reaches must lie in the buffer
    low = v.offset + sum(min(0, (n - 1) * s) for n, s in zip(shape, v.strides))
    high = v.offset + sum(max(0, (n - 1) * s) for n, s in zip(shape, v.strides))
    if v.size and not 0 <= low <= high < flat_size:
        raise Unsupported(f"the view {v.base.name}[{v.offset}: {shape} by {v.strides}] reaches elements {low}..{high} "
                          f"outside its buffer of {flat_size}; run block by block")
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
    #: run's start (:func:`fusionlab.backend.numba.threads.configure`)
    threads: int | None = None
    #: parallel loops split into this many chunks per thread, handed out dynamically (0 or
    #: 1: Numba's static schedule, one share per thread)
    chunks_per_thread: int = DEFAULT_CHUNKS_PER_THREAD
    #: what the last run used (threads, chunk size, why)
    choice: ThreadChoice | None = field(init=False, default=None)
    spec: DriverSource | None = field(init=False, default=None)
    reason: str = field(init=False, default="")
    #: set when a size recorded at capture did not hold in a fused run: every run since
    #: is NumPy's (the same data would fail the same way; :mod:`fusionlab.backend.numba.guards`)
    fallback: SizeFallback | None = field(init=False, default=None)
    _fn: Any = field(init=False, default=None)
    _args: tuple[Any, ...] = field(init=False, default=())
    # dtypes made once: parsing a type's name costs microseconds on every call
    _slot_types: list[tuple[np.dtype, int]] = field(init=False, default_factory=list)
    _fresh_types: list[tuple[np.dtype, tuple[int, int], bool]] = field(init=False, default_factory=list)
    _tables: tuple[Any, ...] = field(init=False, default=())
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
            # per-block bookkeeping (calls that do not fold: hundreds of distinct kernels)
            self.spec = exc.spec
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
        for dtype, n, placed in self.spec.packed_inputs:
            packed = np.zeros(n, dtype=dtype)
            for base, at in placed:
                packed[at:at + base.size] = np.asarray(self.inputs[base.name], dtype=base.np_dtype).reshape(-1)
            args.append(packed)
        self._args = tuple(args)
        self._slot_types = [(np.dtype(d), n) for d, n in self.spec.slots]
        self._fresh_types = [(np.dtype(d), (rows, n), zero) for d, n, zero, rows in self.spec.fresh]
        # the loops' tables: int64 arrays for the compiled driver (one type, whatever the
        # values: the compiled code is the same), lists for Python (whose int indexing is faster)
        self._tables = tuple(np.array(t, dtype=np.int64).reshape(len(t), len(t[0])) if self.mode == "numba"
                             else [list(row) for row in t] for t in self.spec.tables)

    @property
    def kind(self) -> Runs:
        """What a call runs (:attr:`Runs.NUMPY`: every block, after a recorded size did not
        hold: :attr:`fallback`)."""
        if self.fallback is not None:
            return Runs.NUMPY
        return Runs.BLOCKS if self.spec is None else \
            Runs.COMPILED_DRIVER if self.mode == "numba" else Runs.PYTHON_DRIVER

    @property
    def runs(self) -> str:
        """What a call runs, in words: "python driver", "compiled driver", "block by block"
        or "NumPy" (:attr:`kind`)."""
        return self.kind.value

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
        if self.fallback is not None:
            return self._blocks(kernels=False)
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
            self._fn(*self._args, *slots, *fresh, *self._tables, ch)
        except Exception as exc:  # Numba's typing or lowering errors come in many classes
            if isinstance(exc, RecordedSizeMismatch):   # raised_by_data: NumPy runs it (the driver is fine)
                return self._as_numpy(exc, -1)
            return self._fall_back(exc)
        finally:
            for key, s in zip(spec.slots, slots):
                pool.give(key, s)
        draws = self.externals.arrays
        out = {}
        for base, (kind, a, row) in zip(spec.returns, spec.returned):
            value = (fresh[a][row] if kind == "fresh" else draws[a].reshape(-1))[: base.size].reshape(base.shape)
            # small synced arrays share one 2-D array: each is handed out as its own (at most
            # 64 KiB: holding one must not keep the others alive, nor be a view into them)
            out[base.name] = value.copy() if kind == "fresh" and len(fresh[a]) > 1 else value
        return out

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

    def _as_numpy(self, exc: RecordedSizeMismatch, batch: int) -> dict[str, np.ndarray]:
        """The whole run again with NumPy, from its inputs: a kernel found that a size capture
        recorded (a filter's count, an index's range, a histogram's bins) does not hold for
        the values the fused kernels computed. NumPy's roundings are the capture's, so its
        run follows the recording; if it does not either, its own error reaches the caller."""
        self.fallback = SizeFallback(exc.kind, batch, exc.instruction)
        return self._blocks(kernels=False)

    def _blocks(self, kernels: bool = True) -> dict[str, np.ndarray]:
        storage = Storage(self.inputs, pool=self.cache.pool)
        synced: dict[str, np.ndarray] = {}
        ch = self.choice.threads * self.chunks_per_thread if self.choice is not None and self.choice.chunksize else 0
        for k, p in enumerate(self.plans):
            try:
                synced.update(run_plan(p, storage, self.externals, self.cache, chunks=ch, kernels=kernels))
            except RecordedSizeMismatch as exc:
                if not kernels:   # pragma: no cover - NumPy's blocks raise the reference's own errors
                    raise
                return self._as_numpy(exc, k)
        return synced
