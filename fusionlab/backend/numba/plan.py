"""Running a partitioned program with one compiled Numba kernel per block.

Kernels come from :func:`fusionlab.backend.numba.codegen.get_kernel`. Their source is written to a real
file in a cache folder and imported, so Numba's on-disk cache (``cache=True``) lets a later
process skip compilation; in-process, blocks with the same canonical signature share one
compiled kernel. A block with fewer than ``min_size`` elements gets a serial kernel (waking
the thread pool costs more than such a block's work), or runs with NumPy when it is a single
instruction (no temporary to contract, nothing to gain from a compilation). A block that
cannot be compiled — unsupported (opaque NumPy calls, random values not recorded) or
rejected by Numba — runs instruction by instruction with NumPy; a Numba failure also warns,
naming the block and Numba's message.
"""

from __future__ import annotations

import dataclasses
import enum
import importlib.util
import math
import os
import re
import sys
import time
import uuid
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from fusionlab.ir.bytecode import Base, Opcode, OpFamily, Program
from fusionlab.backend.numba.codegen import KernelSource, Unsupported, get_kernel
from fusionlab.backend.numba.layout import LibraryCall, NothingToCompute
from fusionlab.costs import access_info
from fusionlab.costs.timemodel import MachineFigures, load_figures
from fusionlab.backend.numba.guards import (
    GUARD_IMPORT, FilterCountMismatch, NumPyCallFailed, RecordedSizeMismatch,
)
from fusionlab.runtime.reference import Externals, Pool, Storage, block_order, execute_instruction
from fusionlab.backend.numba.threads import chunk_setter, set_chunk, thread_counter
from fusionlab.backend.numba.zeroing import written_before_read

if TYPE_CHECKING:
    from fusionlab.backend.numba.driver import DriverSource

__all__ = ["KernelCache", "NumpyRuns", "BlockPlan", "Plan", "plan", "run_plan", "DEFAULT_MIN_SIZE", "raised_by_data",
           "small_block_choice", "compiler_sized", "MAX_KERNEL_ARRAYS", "one_use_kernels", "ONE_USE_KERNELS"]


def raised_by_data(exc: BaseException) -> bool:
    """Whether a kernel's exception is about the data it ran on, not a failure of the
    kernel: a size capture recorded did not hold (:mod:`fusionlab.backend.numba.guards`: the run
    is done again as NumPy, which raises the program's own error if the data has one). It
    reaches the run's driver, and the kernel stays usable for other data.

    >>> raised_by_data(FilterCountMismatch(0)), raised_by_data(ValueError("typing"))
    (True, False)
    """
    return isinstance(exc, RecordedSizeMismatch)

#: Blocks whose iteration space has fewer elements run with NumPy (see the module notes).
DEFAULT_MIN_SIZE = 4096


def bounds_checked_default() -> bool:
    """Whether kernels are compiled bounds-checked when a :class:`KernelCache` is not told:
    the environment's ``FUSIONLAB_BOUNDSCHECK=1`` (the test suite sets it for the programs
    it runs through every kernel; see :attr:`KernelCache.bounds_checked`)."""
    return os.environ.get("FUSIONLAB_BOUNDSCHECK", "") == "1"


_NJIT = re.compile(r"^@numba\.njit\((.*)\)$", re.M)


def bounds_checked_source(source: str) -> str:
    """``source`` with every ``@numba.njit`` compiled serially and bounds-checked: Numba
    checks no index inside a ``prange`` loop (its ``boundscheck`` stops at the parallel
    region), and without ``parallel`` a ``prange`` is a ``range``, the same iterations in
    order. An index outside its array then raises IndexError instead of reading or writing
    another object's memory.

    >>> print(bounds_checked_source("@numba.njit(parallel=True, cache=True)\\ndef kernel(a0, n0):"))
    @numba.njit(parallel=False, boundscheck=True, cache=True)
    def kernel(a0, n0):
    """
    def checked(m: re.Match[str]) -> str:
        args = [a.strip() for a in m.group(1).split(",") if a.strip() and not a.strip().startswith(("parallel=",
                                                                                                    "boundscheck="))]
        return f"@numba.njit({', '.join(['parallel=False', 'boundscheck=True', *args])})"
    return _NJIT.sub(checked, source)


def _default_dir() -> Path:
    root = os.environ.get("FUSIONLAB_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "fusionlab"
    )
    return Path(root) / "kernels" / cache_salt()


def cache_salt() -> str:
    """What compiled code depends on beyond a kernel's source, as a folder name: Numba's
    and NumPy's versions (their typing and lowering rules), the threading layer asked for
    (a parallel kernel calls into it), and how many threads Numba launches. Numba's own
    index adds the Python version, the CPU and each overload's argument types and layouts.

    >>> cache_salt().startswith("numba")
    True
    """
    import numba

    layer = re.sub(r"\W", "", str(numba.config.THREADING_LAYER)) or "default"
    return f"numba{numba.__version__}-numpy{np.__version__}-{layer}-t{numba.config.NUMBA_NUM_THREADS}"


@dataclass
class KernelCache:
    """Compiled kernels by signature, backed by source files Numba can cache beside."""

    directory: Path = field(default_factory=_default_dir)
    #: compile every kernel and driver serially with Numba's bounds checks
    #: (:func:`bounds_checked_source`): an index outside an array raises IndexError. A test
    #: mode, ``FUSIONLAB_BOUNDSCHECK=1`` by default; its files are named apart (``kb_``, ``db_``)
    bounds_checked: bool = field(default_factory=bounds_checked_default)
    kernels: dict[str, Callable[..., Any]] = field(default_factory=dict)
    drivers: dict[str, Callable[..., Any]] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    #: freed array memory, shared by the storages of successive runs (``Storage(pool=...)``)
    pool: Pool = field(default_factory=Pool)
    hits: int = 0
    misses: int = 0

    def get(self, spec: KernelSource) -> Callable[..., Any]:
        """The kernel for ``spec`` (imported from its cache file; compiled on first call)."""
        got = self.kernels.get(spec.key)
        if got is not None:
            self.hits += 1
            return got
        self.misses += 1
        # a scan kernel asks how many threads run it (its one-pass form for one): the
        # compiled-by-symbol thread_count, a global like the driver's set_chunk
        counts = "thread_count()" in spec.source
        head = "# thread_count: fusionlab.backend.numba.threads.thread_count (a global set before this module runs)\n" \
            if counts else ""
        text = (f"# generated by fusionlab; signature hash {spec.key}\n{head}import numba\nimport numpy as np\n"
                f"{GUARD_IMPORT}\n\n\n{self._checked(spec.source)}\n")
        fn = self._load(f"k{self._mode}_{spec.key}", f"fusionlab_kernel{self._mode}_{spec.key}", text, "kernel",
                        {"thread_count": thread_counter()} if counts else None)
        self.kernels[spec.key] = fn
        return fn

    def get_driver(self, spec: DriverSource) -> Callable[..., Any]:
        """The driver of ``spec`` as a Numba dispatcher, its kernels set as globals: compiled
        on its first call, cached on disk like kernels; ``.py_func`` is the same source as
        plain Python."""
        got = self.drivers.get(spec.key)
        if got is not None:
            self.hits += 1
            return got
        self.misses += 1
        names = "\n".join(f"#   {name}: kernel k{self._mode}_{k.key}.py" for name, k in spec.kernels)
        names += "\n#   set_chunk: fusionlab.backend.numba.threads.set_chunk"
        text = (f"# generated by fusionlab: a compiled driver; source hash {spec.key}\n"
                f"# its kernels are globals, set before this module runs:\n{names}\n"
                "import numba\nimport numpy as np\nfrom numpy.lib.stride_tricks import as_strided\n"
                f"{GUARD_IMPORT}\n\n\n{self._checked(spec.source)}\n")
        fn = self._load(f"d{self._mode}_{spec.key}", f"fusionlab_driver{self._mode}_{spec.key}", text, "driver",
                        {"set_chunk": chunk_setter(), **{name: self.get(k) for name, k in spec.kernels}})
        self.drivers[spec.key] = fn
        return fn

    @property
    def _mode(self) -> str:
        # bounds-checked code lives beside the fast one under other names (Numba's cache
        # index does not know the flags)
        return "b" if self.bounds_checked else ""

    def _checked(self, source: str) -> str:
        return bounds_checked_source(source) if self.bounds_checked else source

    def _load(self, stem: str, name: str, text: str, attr: str,
              globals_: dict[str, Any] | None = None) -> Callable[..., Any]:
        """Write ``text`` to ``stem.py`` in the cache folder (a real file, so Numba's
        ``cache=True`` works) and import it as module ``name``, with ``globals_`` set before
        it runs. Numba's cached code names its module: the name must not change."""
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self.directory / f"{stem}.py"
        _publish(path, text)
        module_spec = importlib.util.spec_from_file_location(name, path)
        assert module_spec is not None and module_spec.loader is not None
        module = importlib.util.module_from_spec(module_spec)
        module.__dict__.update(globals_ or {})
        sys.modules[name] = module
        module_spec.loader.exec_module(module)
        return getattr(module, attr)


def _publish(path: Path, text: str) -> None:
    """Make ``path`` hold ``text``, safely when other processes do the same at once.

    The file is written to a temporary name and then linked into place, which fails if the
    file already exists: a file that is there is never rewritten (its name is the hash of
    its text), so its modification time — part of Numba's cache index — stays what the
    process that compiled it saw. A file with other contents (truncated by a crash) is
    replaced atomically (``os.replace``).
    """
    try:
        if path.read_text() == text:
            return
        exists = True
    except (OSError, UnicodeDecodeError):
        exists = False
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    tmp.write_text(text)
    try:
        if exists:
            os.replace(tmp, path)
            return
        try:
            os.link(tmp, path)   # atomic create-if-absent
        except FileExistsError:
            pass   # another process published it first: the same text (same hash)
        except OSError:   # no hard links on this file system
            os.replace(tmp, path)
            return
    finally:
        if tmp.exists():
            tmp.unlink()


class NumpyRuns(enum.Enum):
    """Why NumPy runs a block instead of a kernel of its own (``BlockPlan.numpy``; the
    block's ``reason`` says it in words, with the detail)."""

    #: SYNCs and DELs only, or draws lent to their bases: nothing to compute
    NOTHING_TO_COMPUTE = "nothing to compute"
    #: one contraction: NumPy's own call (BLAS for ``@``) is its kernel, not a fallback
    LIBRARY_CALL = "library call"
    #: one instruction on few elements: NumPy's one call costs less than the kernel's
    CHEAPER = "cheaper"
    #: its serial kernel would be compiled for one call (a run's driver may still call it)
    ONE_CALL = "one call"
    #: the backend cannot compile it (the reason says what and what to do)
    UNSUPPORTED = "unsupported"


@dataclass(frozen=True)
class BlockPlan:
    """How one block runs: its kernel, or why NumPy runs it.

    ``bind`` are RANDOM instructions run by lending the recorded draws to their base (no
    copy; the kernel reads them as an input); ``fresh`` are bases this block allocates whose
    every element is written (here or by later blocks) before any is read, so their memory
    need not be zeroed (:func:`~fusionlab.backend.numba.zeroing.written_before_read`); ``writes``
    are the bases the block writes.
    """

    instructions: tuple[int, ...]
    kernel: KernelSource | None
    reason: str = ""
    bind: tuple[int, ...] = ()
    fresh: tuple[Base, ...] = ()
    writes: frozenset[str] = frozenset()
    syncs: tuple[Base, ...] = ()   # after the kernel: the bases it syncs,
    frees: tuple[str, ...] = ()   # and those it frees (DELs of what it did not contract)
    releases: tuple[str, ...] = ()   # a block of DELs only: the bases it frees (no other bookkeeping)
    lend: tuple[tuple[Base, int], ...] = ()   # ``bind`` as (base, key of the recorded draw)
    #: a block run with NumPy for its size (one instruction on few elements) still has a
    #: serial kernel, which the run's driver (:mod:`fusionlab.backend.numba.driver`) calls instead
    serial: KernelSource | None = None
    #: why NumPy runs the block when ``kernel`` is None (None when it has a kernel)
    numpy: NumpyRuns | None = None

    @property
    def compiled(self) -> KernelSource | None:
        """The kernel the run's driver calls for this block (None: no computing instruction,
        or one NumPy has to run)."""
        return self.kernel or self.serial

    @property
    def numbered(self) -> list[int]:
        return [i + 1 for i in self.instructions]


@dataclass(frozen=True)
class Plan:
    """A program's blocks in execution order, each with its kernel or NumPy; ``notes`` say
    where a block of the partition runs as several kernels (:func:`compiler_sized`)."""

    program: Program
    blocks: tuple[BlockPlan, ...]
    notes: tuple[str, ...] = ()


#: The most arrays one kernel takes (its array arguments). Numba's compile time per array
#: grows past about this many: a 5-D map kernel storing k separate arrays (a convolution's
#: Python loop keeping each window's product) took 1.0, 1.7, 2.6 and 3.4 s of CPU to compile
#: at k = 8, 16, 24 and 32, then 10.5 s at 48 and 18 s at 64; one of 123 arrays, over a
#: minute. Past it a block is compiled as several kernels (docs/backend.md, "Kernel size").
MAX_KERNEL_ARRAYS = 32


def compiler_sized(program: Program, blocks: Sequence[Sequence[int]], limit: int = MAX_KERNEL_ARRAYS
                   ) -> tuple[list[tuple[int, ...]], list[str]]:
    """``blocks`` with each block whose instructions touch more than ``limit`` arrays cut, in
    program order, into pieces that touch at most ``limit`` each (one instruction that alone
    touches more is a piece of its own), and a note for each block cut.

    Every piece is a subset of a legal block, so it is legal itself, and pieces of one block
    in program order add no cycle to the partition (a path from an earlier piece through
    another block to a later one would be a path from the block to itself). What the cut
    costs is a store and a load of the arrays that crossed it, against compile times that
    grow faster than the kernel (:data:`MAX_KERNEL_ARRAYS`).

    >>> from fusionlab import parse
    >>> p = parse("ARRAY a float64[4]\\nARRAY b float64[4]\\nARRAY c float64[4]\\n"
    ...           "COPY a, 1\\nCOPY b, 2\\nCOPY c, 3\\nSYNC a\\nSYNC b\\nSYNC c")
    >>> pieces, notes = compiler_sized(p, [range(6)], limit=2)
    >>> pieces
    [(0, 1), (2, 3, 4, 5)]
    >>> notes[0].split(":")[0]
    'block [1, 2, 3, 4, 5, 6] (6 instructions, 3 arrays) runs as 2 kernels of at most 2 arrays'
    """
    out: list[tuple[int, ...]] = []
    notes: list[str] = []
    for block in blocks:
        members = sorted(block)
        touched = [{v.base.name for v in program[i].reads() + program[i].writes()}
                   if program[i].opcode not in OpFamily.SYSTEM else set() for i in members]
        local = _block_local(program, members)
        total = set().union(*touched) - set(local) if touched else set()
        if len(total) <= limit:
            out.append(tuple(members))
            continue
        pieces: list[list[int]] = [[]]
        names: set[str] = set()   # the piece's arrays: what it touches but did not create
        for pos, (i, bases) in enumerate(zip(members, touched)):
            start = pos - len(pieces[-1])
            # an array created and freed inside the block is contracted when the piece holds
            # its whole life (created at or after the piece's start); else it is an argument
            mine = {b for b in bases if b not in local or local[b][0] < start}
            if pieces[-1] and len(names | mine) > limit:
                pieces.append([])
                names = set()
                mine = {b for b in bases if b not in local or local[b][0] < pos}
            pieces[-1].append(i)
            names |= mine
        out.extend(tuple(p) for p in pieces)
        shown = [i + 1 for i in members]
        named = str(shown) if len(shown) <= 6 else f"[{shown[0]}, {shown[1]}, {shown[2]}, ..., {shown[-1]}]"
        notes.append(f"block {named} ({len(members)} instructions, {len(total)} arrays) runs as {len(pieces)} kernels of at "
                     f"most {limit} arrays: Numba's compile time grows faster than the kernel past that "
                     "(docs/backend.md, \"Kernel size\")")
    return out, notes


def _block_local(program: Program, members: Sequence[int]) -> dict[str, tuple[int, int]]:
    """The arrays a block creates and frees (its first access of them writes without reading,
    and it holds their DEL): name -> positions in ``members`` of that write and the DEL."""
    first: dict[str, tuple[int, bool]] = {}
    freed: dict[str, int] = {}
    for pos, i in enumerate(members):
        ins = program[i]
        if ins.opcode is Opcode.DEL:
            freed[ins.outputs[0].base.name] = pos
            continue
        if ins.opcode in OpFamily.SYSTEM:
            continue
        read = {v.base.name for v in ins.reads()}
        for v in ins.writes():
            first.setdefault(v.base.name, (pos, v.base.name not in read))
        for name in read:
            first.setdefault(name, (pos, False))
    return {name: (pos, freed[name]) for name, (pos, created) in first.items() if created and name in freed}


def small_block_choice(size: int, arguments: int, min_size: int, figures: MachineFigures) -> tuple[bool, str]:
    """Whether a block of one instruction on ``size`` (< ``min_size``) elements runs its
    serial kernel block by block (True) or NumPy's call, and why, from the machine's
    measured figures (:func:`fusionlab.costs.timemodel.load_figures`): a serial kernel's call from
    Python and each of its ``arguments`` against a lone NumPy call from the executor. The
    elements cost the same either way (one pass, no temporary to contract); a run's driver
    always calls the kernel (from compiled code: about 0.01 µs a call, benchmarks/results/driver.json).

    >>> from fusionlab.costs.timemodel import default_figures
    >>> use, why = small_block_choice(400, 2, 4096, default_figures())
    >>> use, why
    (True, 'serial kernel: one instruction on 400 elements (fewer than min_size=4096); its call from Python 1.3 µs against NumPy’s 6.0 µs (machine figures: default)')
    """
    launch = figures.launch
    kernel = launch["serial"] + launch.get("argument", 0.0) * arguments
    numpy = launch.get("numpy", 0.0)
    use = kernel < numpy
    what = "serial kernel" if use else "NumPy"
    return use, (f"{what}: one instruction on {size} elements (fewer than min_size={min_size}); its call from Python "
                 f"{kernel * 1e6:.1f} µs against NumPy’s {numpy * 1e6:.1f} µs (machine figures: {figures.source})")


def plan(program: Program, blocks: Sequence[Sequence[int]], min_size: int = DEFAULT_MIN_SIZE,
         figures: MachineFigures | None = None, max_arrays: int = MAX_KERNEL_ARRAYS,
         orders: dict[tuple[str, tuple[tuple[int, ...], ...]], list[int]] | None = None) -> Plan:
    """Decide, block by block, between a kernel and NumPy; order the blocks. ``figures``
    (this machine's calibration by default) decide the blocks of one instruction below
    ``min_size`` (:func:`small_block_choice`). A block touching more than
    ``max_arrays`` arrays runs as several kernels (:func:`compiler_sized`). ``orders``
    keeps the blocks' order per program signature for the next alike batch (a loop's:
    ordering builds the batch's graph, a second each at 2,000 instructions)."""
    blocks, notes = compiler_sized(program, blocks, max_arrays)
    key = (program.signature(), tuple(tuple(b) for b in blocks))
    order = orders.get(key) if orders is not None else None
    if order is None:
        order = block_order(program, blocks)
        if orders is not None:
            orders[key] = order
    of = {}
    for b in blocks:
        for i in b:
            of[i] = tuple(sorted(b))
    seen: list[tuple[int, ...]] = []
    for i in order:
        if of[i] not in seen:
            seen.append(of[i])
    # bases all of whose elements are written before any is read: their memory needs no
    # zeroing (keyed by the instruction that first touches them)
    unzeroed = written_before_read(program, order)
    access = access_info(program)   # once: get_kernel would walk the program per block
    out: list[BlockPlan] = []
    alone_kernels: list[int] = []   # small blocks given their serial kernel by small_block_choice
    for b in seen:
        computing = [i for i in b if program[i].opcode not in OpFamily.SYSTEM]
        writes = frozenset(v.base.name for i in computing for v in program[i].writes())
        if all(program[i].opcode is Opcode.DEL for i in b):
            out.append(BlockPlan(b, None, "no computing instruction",
                                 releases=tuple(program[i].outputs[0].base.name for i in b),
                                 numpy=NumpyRuns.NOTHING_TO_COMPUTE))
            continue
        try:
            # the kernel's iteration space is its first computing instruction's (get_kernel
            # refuses a block whose instructions differ): sized here, the source is made once
            domain = program[computing[0]].domain if computing else None
            size = math.prod(domain) if domain is not None else 0
            parallel = size >= min_size
            # one instruction on few elements: a serial kernel or NumPy's one call, by the
            # machine's figures for each called from Python (small_block_choice); a run's
            # driver, whose calls cost far less, takes the serial kernel either way (``serial``)
            alone = domain is not None and not parallel and len(computing) == 1
            spec = get_kernel(program, b, parallel=parallel, access=access)
            bind = _bindable(program, b, spec)
            if bind:
                writes = frozenset(v.base.name for i in computing if i not in bind for v in program[i].writes())
                rest = [i for i in b if i not in bind]
                try:
                    spec = get_kernel(program, rest, parallel=parallel, access=access)
                except Unsupported:   # nothing left to compute: the block is its draws
                    # not a fallback: nothing is computed, the draws are read in place
                    out.append(BlockPlan(b, None, "no computing instruction: its recorded random values are lent "
                                         "to their bases (read in place, never copied)", bind, (), writes,
                                         lend=_lend(program, bind), numpy=NumpyRuns.NOTHING_TO_COMPUTE))
                    continue
            written = {v.base.name: v.base for i in spec.instructions for v in program[i].writes()}
            fresh = tuple(base for name, base in written.items() if name not in spec.contracted
                          and any((name, i) in unzeroed for i in spec.instructions))
            # SYNCs before DELs: a base is never synced after its DEL, so this is program order's effect
            syncs = tuple(program[i].views_in[0].base for i in b if program[i].opcode is Opcode.SYNC)
            frees = tuple(program[i].outputs[0].base.name for i in b if program[i].opcode is Opcode.DEL
                          and program[i].outputs[0].base.name not in spec.contracted)
            if alone:
                figures = figures or load_figures()
                use, why = small_block_choice(size, len(spec.arguments) + len(spec.randoms), min_size, figures)
                if use:
                    alone_kernels.append(len(out))
                out.append(BlockPlan(b, spec if use else None, why, bind, fresh, writes, syncs, frees,
                                     lend=_lend(program, bind), serial=None if use else spec,
                                     numpy=None if use else NumpyRuns.CHEAPER))
                continue
            why = "" if parallel else f"serial: {size} elements, fewer than min_size={min_size}"
            out.append(BlockPlan(b, spec, why, bind, fresh, writes, syncs, frees, lend=_lend(program, bind)))
        except Unsupported as exc:
            why_numpy = NumpyRuns.NOTHING_TO_COMPUTE if isinstance(exc, NothingToCompute) else \
                NumpyRuns.LIBRARY_CALL if isinstance(exc, LibraryCall) else NumpyRuns.UNSUPPORTED
            out.append(BlockPlan(b, None, str(exc), writes=writes, numpy=why_numpy))
    return Plan(program, tuple(_compiled_once(out, alone_kernels)), tuple(notes))


#: what compiling one small serial kernel costs (CPU seconds, 0.3-0.8 s measured here:
#: benchmarks/results/driver.json); saving a few microseconds a call never repays it
COMPILE_SECONDS = 0.3


def _compiled_once(blocks: list[BlockPlan], alone: Sequence[int]) -> list[BlockPlan]:
    """``blocks`` with each small block whose serial kernel no other block of the batch
    calls run by NumPy again: its kernel would be compiled for one call (a reduction's
    kernel has its view's offsets in its code, so Gaussian elimination's columns compiled a
    kernel each: the first run took 43 s of CPU at medium instead of 6.7 s). A run's
    compiled driver still calls the serial kernel (``serial``)."""
    uses: dict[str, int] = {}
    for p in blocks:
        for k in (p.kernel, p.serial):
            if k is not None:
                uses[k.key] = uses.get(k.key, 0) + 1
    out = list(blocks)
    for i in alone:
        p = out[i]
        if p.kernel is not None and uses[p.kernel.key] == 1:
            why = p.reason.replace("serial kernel: ", "NumPy: ", 1).split("; its call", 1)[0]
            out[i] = dataclasses.replace(p, kernel=None, serial=p.kernel, numpy=NumpyRuns.ONE_CALL, reason=(
                f"{why}; its serial kernel would be compiled for this one call (about {COMPILE_SECONDS:g} s) "
                "to save microseconds"))
    return out


#: Above this many serial kernels each called once in a run, a run compiles none of them.
ONE_USE_KERNELS = 40


def one_use_kernels(plans: Sequence[Plan], most: int = ONE_USE_KERNELS) -> list[Plan]:
    """``plans`` (one run's batches) with their serial kernels that the run calls once each
    run by NumPy, when there are more than ``most`` of them.

    A Python loop over slices whose lengths change with the loop variable (PolyBench's
    ``symm``, ``syr2k`` or ``trmm`` in npbench: ``C[:i, j] += alpha * B[i, j] * A[i, :i]``)
    makes a block of a different shape and composition at every step: at 20 x 25, 527
    distinct kernels in one batch of 3,600 instructions, whose compilation (about
    :data:`COMPILE_SECONDS` each) took minutes where NumPy runs the whole program in
    milliseconds. Each such block runs with NumPy instead, as one running alone below
    ``min_size`` does (:func:`_compiled_once`); a kernel called more than once in the run (a
    time step's boundary block, batch after batch) keeps it, and a run with few such kernels
    is left as planned (their compilation is a second or two, cached for the next run).

    >>> one_use_kernels([], most=0)
    []
    """
    uses: dict[str, int] = {}
    for p in plans:
        for b in p.blocks:
            k = b.compiled
            if k is not None:
                uses[k.key] = uses.get(k.key, 0) + 1
    once = {key for key, n in uses.items() if n == 1}
    # one instruction alone below min_size is :func:`_compiled_once`'s choice already (block
    # by block NumPy runs it, a run's driver its serial kernel)
    chosen = [(i, j) for i, p in enumerate(plans) for j, b in enumerate(p.blocks)
              if b.kernel is not None and b.kernel.key in once and not b.kernel.parallel_iterations
              and not b.bind]
    if len(chosen) <= most:
        return list(plans)
    out = [list(p.blocks) for p in plans]
    for i, j in chosen:
        b = out[i][j]
        out[i][j] = dataclasses.replace(b, kernel=None, serial=None, numpy=NumpyRuns.ONE_CALL, reason=(
            f"NumPy: its serial kernel would be compiled for this one call, one of {len(chosen)} such kernels in "
            f"this run (about {COMPILE_SECONDS:g} s each to compile, to save microseconds)"))
    return [dataclasses.replace(p, blocks=tuple(blocks)) for p, blocks in zip(plans, out)]


def _lend(program: Program, bind: Sequence[int]) -> tuple[tuple[Base, int], ...]:
    return tuple((program[i].outputs[0].base, program[i].attr("key")) for i in bind)


def _bindable(program: Program, block: Sequence[int], spec: KernelSource) -> tuple[int, ...]:
    """RANDOM instructions of a kernel whose base can borrow the recorded draws: the draw
    fills the whole base, which the kernel does not contract and nothing else in the block
    writes."""
    out = []
    for i in block:
        ins = program[i]
        if ins.opcode is not Opcode.RANDOM or ins.attr("key") is None:
            continue
        v = ins.outputs[0]
        name = v.base.name
        if name in spec.contracted or not v.covers_base:
            continue
        if any(w.base.name == name for j in block if j != i for w in program[j].writes()):
            continue
        out.append(i)
    return tuple(out)


def run_plan(
    p: Plan,
    storage: Storage,
    externals: Externals,
    cache: KernelCache,
    timings: dict[str, float] | None = None,
    chunks: int = 0,
    kernels: bool = True,
    *,
    block_timings: dict[int, float] | None = None,
    clock: Callable[[], float] = time.perf_counter,
    serial_kernels: bool = False,
) -> dict[str, np.ndarray]:
    """Execute a plan on ``storage``; returns the synced arrays.

    A synced array is the storage's own memory, not a copy: the storage copies a base
    before writing it again after a SYNC (copy on write), so the value stays as synced.
    ``chunks`` (threads times chunks per thread; 0: leave the schedule as it is) sets the
    dynamic schedule's chunk before each parallel kernel whose loop differs from the last,
    as the run's driver does. ``kernels=False`` runs every block with NumPy (after a size
    recorded at capture did not hold: :mod:`fusionlab.backend.numba.guards`); a kernel's
    :class:`~fusionlab.backend.numba.guards.RecordedSizeMismatch` reaches the caller.

    ``timings`` adds each kernel call's seconds under its kernel's key (the kernel alone).
    ``block_timings`` adds every block's seconds — a kernel's or the instructions NumPy
    runs, with the block's bookkeeping (lent draws, SYNCs, DELs) — under the block's position
    in ``p.blocks``, read on ``clock`` (one reading per block, and one at the end: a block's
    time runs from its start to the next block's); a profile reads it
    (:mod:`fusionlab.pipeline.profiling`). ``serial_kernels`` calls a block's serial kernel
    where block by block NumPy would run it alone (``BlockPlan.compiled``), as the run's
    driver does. Without them nothing is timed and nothing changes."""
    # The Python between two kernels is time the compiled loops do not spend (Monte Carlo:
    # one gap per batch, 21 µs at medium, twice that after a kernel has streamed 160 MB
    # through the cache): what can be worked out once is, in ``plan``.
    synced: dict[str, np.ndarray] = {}
    program = p.program
    view = storage.view
    draws = externals.arrays
    chunked_for = 0
    timed = block_timings is not None
    started = clock() if timed else 0.0
    for position, bp in enumerate(p.blocks):
        if timed and position:   # the block before this one ends here
            now = clock()
            block_timings[position - 1] = block_timings.get(position - 1, 0.0) + now - started  # type: ignore[index]
            started = now
        if bp.releases:   # most blocks between kernels
            for name in bp.releases:
                storage.release(name)
            continue
        for k, (base, key) in enumerate(bp.lend):
            if not storage.borrow(base, draws[key]):
                execute_instruction(program[bp.bind[k]], storage, externals, synced)
        if storage.borrowed and not bp.writes.isdisjoint(storage.borrowed):
            for name in bp.writes & storage.borrowed:
                storage.own(name)
        spec = (bp.compiled if serial_kernels else bp.kernel) if kernels else None
        if spec is not None and spec.key not in cache.failed:
            try:
                fn = cache.kernels.get(spec.key) or cache.get(spec)
                for base in bp.fresh:
                    storage.ensure(base, zero=False)
                # a zero-dimensional view goes in as one element (the kernel indexes [0])
                args = [a if a.ndim else a.reshape(1) for a in map(view, spec.arguments)]
                args += [draws[k] for k in spec.randoms]
                args += spec.scalar_arguments
                if chunks and spec.parallel_iterations and spec.parallel_iterations != chunked_for:
                    chunked_for = spec.parallel_iterations
                    set_chunk(max(1, chunked_for // chunks))
                if timings is not None:
                    t = time.perf_counter()
                    fn(*args)
                    timings[spec.key] = timings.get(spec.key, 0.0) + time.perf_counter() - t
                else:
                    fn(*args)
            except Exception as exc:  # Numba's typing or lowering errors come in many classes
                if raised_by_data(exc):
                    raise
                message = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else type(exc).__name__
                cache.failed[spec.key] = message
                warnings.warn(
                    f"block {bp.numbered}: Numba could not compile it ({message}); running it with NumPy",
                    RuntimeWarning, stacklevel=2,
                )
            else:
                for base in bp.syncs:
                    synced[base.name] = storage.share(base)
                for name in bp.frees:
                    storage.release(name)
                continue
        bound = set(bp.bind)
        for i in bp.instructions:
            ins = program[i]
            if ins.opcode is Opcode.SYNC:   # no copy: a later write copies first
                synced[ins.views_in[0].base.name] = storage.share(ins.views_in[0].base)
            elif i not in bound or ins.outputs[0].base.name not in storage.borrowed:
                try:
                    execute_instruction(ins, storage, externals, synced)
                except (IndexError, ValueError) as exc:
                    if not kernels or isinstance(exc, RecordedSizeMismatch):
                        raise
                    # on values a kernel computed: maybe rounded across a threshold NumPy's were not
                    raise NumPyCallFailed(i) from exc
    if timed and p.blocks:
        last = len(p.blocks) - 1
        block_timings[last] = block_timings.get(last, 0.0) + clock() - started  # type: ignore[index]
    return synced
