"""Threads for parallel kernels, sized to the cores that are free when a run starts.

A parallel kernel (``numba.prange``) splits its loop into one equal share per thread and
waits at its end for the slowest share. When another process holds one of the cores, the
thread that shares that core is descheduled for whole time slices and every kernel waits
for it: on two cores with one busy competitor a fused reaction-diffusion run took three
times as long (docs/backend.md, "Shared machine"). Two remedies, both decided per run:

- **threads sized to the free cores**: :func:`free_cores` counts the cores of this
  process's affinity mask minus the runnable tasks of *other* processes (``procs_running``
  of ``/proc/stat`` less this process's own running threads), and :func:`configure` sets
  Numba's thread count to it (``numba.set_num_threads``: a mask over the launched pool, so
  it costs a few microseconds);
- **a schedule that tolerates a slow thread**: with more than one thread, the parallel
  loop is handed out in chunks (``numba.set_parallel_chunksize``), so a thread that loses
  its core takes fewer chunks instead of holding everyone up at the end.

Kernels follow the count at run time too: a one-dimensional scan kernel asks
:func:`thread_count` and, on one thread, runs its serial one-pass form instead of the
two-pass chunked scan (``fusionlab.backend.numba.codegen``; docs/reductions-and-scans.md, "Scans").

Calling :func:`configure` also launches Numba's thread pool, which a compiled driver loaded
from Numba's disk cache does not do by itself (see :mod:`fusionlab.backend.numba.plan`).

:func:`cpu_snapshot` and :func:`others_busy` measure how many cores other processes used
while something was timed (the ``busy`` flag of :func:`fusionlab.pipeline.comparison.compare`).

Examples
--------
>>> n = free_cores()
>>> 1 <= n <= available_cores()
True
>>> configure(1).threads
1
>>> a = cpu_snapshot(); b = cpu_snapshot()
>>> others_busy(a, b) >= 0.0
True
"""

from __future__ import annotations

import functools
import os
import time
from dataclasses import dataclass
from typing import Any, Callable

__all__ = ["available_cores", "free_cores", "configure", "ThreadChoice", "ThreadPolicy", "CpuSnapshot", "cpu_snapshot",
           "others_busy", "DEFAULT_CHUNKS_PER_THREAD", "set_chunk", "chunk_setter", "thread_count",
           "thread_counter"]

#: With more than one thread, a parallel loop is split into this many chunks per thread
#: (dynamic schedule): a thread that loses its core for a time slice leaves its later
#: chunks to the others. Measured in docs/backend.md ("Shared machine").
DEFAULT_CHUNKS_PER_THREAD = 4


def available_cores() -> int:
    """The cores this process may run on (its affinity mask), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):   # not Linux
        return max(1, os.cpu_count() or 1)


def _procs_running() -> int | None:
    """Runnable tasks on the whole machine right now (the fourth field of ``/proc/loadavg``,
    ``running/total``: a small file, unlike ``/proc/stat`` whose interrupt line is long), or None."""
    try:
        with open("/proc/loadavg", "rb") as fh:
            return int(fh.read().split()[3].split(b"/")[0])
    except (OSError, ValueError, IndexError):
        return None


def _own_running() -> int:
    """This process's threads that are running or runnable (at least the caller)."""
    n = 0
    try:
        for tid in os.listdir("/proc/self/task"):
            try:
                with open(f"/proc/self/task/{tid}/stat", "rb") as fh:
                    stat = fh.read()
            except OSError:
                continue
            # the state follows the command name in parentheses, which may hold spaces
            if stat[stat.rindex(b")") + 2:stat.rindex(b")") + 3] == b"R":
                n += 1
    except OSError:
        return 1
    return max(n, 1)


def free_cores(samples: int = 3) -> int:
    """Cores not taken by other processes now: the affinity mask's cores minus the other
    processes' runnable tasks (the fewest of ``samples`` reads, so a task that only passes
    by is not counted), at least 1. This process's own running threads are counted out
    only when the machine shows more runnable tasks than the caller alone (reading them
    costs a file per thread)."""
    total = available_cores()
    running = _machine_running(samples)
    if running is None:
        return total
    others = running - 1   # the caller is running
    if others > 0:
        # this process's threads first, the machine's count after them: a worker of our own
        # pool still spinning after the last parallel loop (OpenMP's spin lasts 1-4 ms here)
        # only stops in between, so it is counted in both reads or in the second not at
        # all. Read the other way round, a worker that stopped between the reads counted
        # as another process, and the run right after a parallel loop got one thread (the
        # compiled driver's bimodal 15 / 30 ms on histogram equalisation, after the loop).
        own = _own_running()
        running = _machine_running(samples)
        if running is None:
            return total
        others = max(0, running - own)
    return max(1, total - others)


def _machine_running(samples: int) -> int | None:
    """The fewest runnable tasks of ``samples`` reads (a task passing by is not counted)."""
    seen = []
    for _ in range(max(1, samples)):
        running = _procs_running()
        if running is None:
            return None
        seen.append(running)
    return min(seen)


@dataclass(frozen=True)
class ThreadChoice:
    """What :func:`configure` set: threads, chunk size (0: Numba's static schedule), and why."""

    threads: int
    chunksize: int
    reason: str


def configure(threads: int | None = None, elements: int = 0,
              chunks_per_thread: int = DEFAULT_CHUNKS_PER_THREAD) -> ThreadChoice:
    """Set Numba's thread count (``threads``, or the free cores when None) and the parallel
    chunk size for loops of about ``elements`` outer iterations (0: unknown, no chunking).

    Launches Numba's thread pool if it is not yet running.
    """
    import numba

    limit = numba.config.NUMBA_NUM_THREADS
    if threads is None:
        free = free_cores()
        threads = min(free, limit)
        reason = f"{free} of {available_cores()} cores free"
    else:
        threads = max(1, min(int(threads), limit))
        reason = "asked for"
    numba.set_num_threads(threads)   # also launches the pool (a cached driver needs it)
    chunk = 0
    if threads > 1 and chunks_per_thread > 1 and elements > 0:
        chunk = max(1, elements // (threads * chunks_per_thread))
    numba.set_parallel_chunksize(chunk)
    return ThreadChoice(threads, chunk, reason)


def set_chunk(n: int) -> None:
    """Hand the next parallel loops out in chunks of ``n`` iterations (0: Numba's static
    schedule), from Python or from compiled code (a run's compiled driver calls it before
    each parallel kernel whose loop differs from the last one's).

    Compiled, it calls the threading layer's ``set_parallel_chunksize`` by its symbol name,
    as Numba's own parallel loops do: Numba's ``numba.set_parallel_chunksize`` compiles to
    a call through a ctypes pointer, which Numba cannot cache on disk, so a compiled driver
    that used it was never cached. Call :func:`chunk_setter` once before compiling a caller.

    >>> import numba
    >>> _ = numba.set_num_threads(1); set_chunk(5); numba.get_parallel_chunksize()
    5
    >>> set_chunk(0)
    """
    import numba

    numba.set_parallel_chunksize(n)


@functools.lru_cache(maxsize=1)
def chunk_setter() -> Callable[[int], None]:
    """:func:`set_chunk`, with its compiled form registered for Numba (once per process)."""
    import llvmlite.ir
    from numba import types
    from numba.core import cgutils
    from numba.extending import intrinsic, overload

    @intrinsic
    def _set(typingctx: Any, n: Any) -> Any:
        if not isinstance(n, types.Integer):
            return None

        def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
            size_t = context.get_value_type(types.uintp)
            # the declaration Numba's parfor lowering uses for the same symbol
            fn = cgutils.get_or_insert_function(builder.module, llvmlite.ir.FunctionType(
                llvmlite.ir.VoidType(), [size_t]), name="set_parallel_chunksize")
            builder.call(fn, [context.cast(builder, args[0], n, types.uintp)])
            return context.get_dummy_value()
        return types.void(n), codegen

    @overload(set_chunk)
    def _compiled(n: Any) -> Any:
        if isinstance(n, types.Integer):
            def impl(n: Any) -> None:   # the same annotation as the typing function (Numba compares them)
                _set(n)
            return impl
        return None

    return set_chunk


def thread_count() -> int:
    """The threads the next parallel loop of this thread will use (``numba.get_num_threads``),
    from Python or from compiled code: a one-dimensional scan kernel asks it to run its
    serial one-pass form when it is 1 (the two-pass chunked form is for several threads;
    ``fusionlab.backend.numba.codegen``, ``chunked_scan``).

    Compiled, it calls the threading layer's ``get_num_threads`` by its symbol name, as
    Numba's own parfor lowering does: Numba's ``numba.get_num_threads`` compiles to a call
    through a ctypes pointer, which Numba cannot cache on disk. Call :func:`thread_counter`
    once before compiling a caller.

    >>> import numba
    >>> _ = numba.set_num_threads(1); thread_count()
    1
    """
    import numba

    return int(numba.get_num_threads())


@functools.lru_cache(maxsize=1)
def thread_counter() -> Callable[[], int]:
    """:func:`thread_count`, with its compiled form registered for Numba (once per process);
    also launches Numba's thread pool, whose symbols the compiled form calls."""
    import llvmlite.ir
    import numba
    from numba import types
    from numba.core import cgutils
    from numba.extending import intrinsic, overload

    numba.get_num_threads()   # launches the pool: its symbols are then known to LLVM

    @intrinsic
    def _get(typingctx: Any) -> Any:
        def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
            fn = cgutils.get_or_insert_function(builder.module, _fn_type(context), name="get_num_threads")
            # the C function returns an ``int`` (ctypes' c_int in Numba): only its low 32 bits count
            low = builder.trunc(builder.call(fn, []), llvmlite.ir.IntType(32))
            return builder.sext(low, context.get_value_type(types.intp))
        return types.intp(), codegen

    @overload(thread_count)
    def _compiled() -> Any:
        def impl() -> int:
            return _get()
        return impl

    return thread_count


def _fn_type(context: Any) -> Any:
    """``intp get_num_threads(void)``, as Numba's parfor lowering declares the threading
    layer's function (its C ``int`` is read from the low 32 bits: see the caller)."""
    import llvmlite.ir
    from numba import types

    return llvmlite.ir.FunctionType(context.get_value_type(types.intp), [])


@dataclass
class ThreadPolicy:
    """:func:`configure` for successive runs, measuring the free cores at most every
    ``refresh`` seconds: reading them costs about 0.5 ms on a loaded machine (a file per
    thread of this process), more than a small run takes.

    >>> policy = ThreadPolicy(threads=1)
    >>> policy.apply(100).threads
    1
    """

    threads: int | None = None
    chunks_per_thread: int = DEFAULT_CHUNKS_PER_THREAD
    refresh: float = 0.05
    _free: int = 0
    _at: float = float("-inf")

    def apply(self, elements: int) -> ThreadChoice:
        """Set Numba's threads and schedule for a run whose shortest parallel loop has
        ``elements`` iterations."""
        threads = self.threads
        reason = "asked for"
        if threads is None:
            now = time.perf_counter()
            if now - self._at > self.refresh:
                self._free, self._at = free_cores(), now
            threads = self._free
            reason = f"{self._free} of {available_cores()} cores free"
        choice = configure(threads, elements, self.chunks_per_thread)
        return ThreadChoice(choice.threads, choice.chunksize, reason)


@dataclass(frozen=True)
class CpuSnapshot:
    """A moment's counters: wall clock, the machine's busy CPU seconds, this process's CPU seconds."""

    wall: float
    machine: float | None
    own: float


_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def cpu_snapshot() -> CpuSnapshot:
    """The counters :func:`others_busy` compares."""
    machine = None
    try:
        with open("/proc/stat", "rb") as fh:
            fields = [int(x) for x in fh.readline().split()[1:]]
        # user nice system idle iowait irq softirq steal ...: busy is all but idle and iowait
        machine = (sum(fields) - fields[3] - (fields[4] if len(fields) > 4 else 0)) / _TICK
    except (OSError, ValueError, IndexError):
        pass
    t = os.times()
    return CpuSnapshot(time.perf_counter(), machine, t.user + t.system)


def others_busy(a: CpuSnapshot, b: CpuSnapshot) -> float:
    """Cores other processes kept busy, on average, between snapshots ``a`` and ``b``
    (0.0 when unknown). ``/proc/stat`` counts in ticks (10 ms): short intervals are coarse."""
    wall = b.wall - a.wall
    if a.machine is None or b.machine is None or wall <= 0:
        return 0.0
    return max(0.0, ((b.machine - a.machine) - (b.own - a.own)) / wall)
