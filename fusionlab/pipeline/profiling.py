"""A profile of one partition: each block timed, beside what the ``time`` model predicts.

:func:`profile` plans a target (a :class:`~fusionlab.capture.Capture` or a program) as
:func:`fusionlab.pipeline.run` plans it and calls :func:`profile_plans`, which runs the plans
block by block ``repeat`` times after one warm-up, timing each block — a kernel, the
instructions NumPy runs, an opaque call — and times the whole run with the run's driver
(:class:`~fusionlab.backend.numba.driver.Driver`, what ``run`` and ``compare`` time). Each
block becomes a :class:`KernelTiming`: its median seconds, the ``time`` model's prediction
for it (:meth:`~fusionlab.costs.timemodel.TimeModel.block_times`), the bytes it moves (the
model's reads and writes outside the block) and the floating-point work it does
(:func:`block_flops`). The model prices each block as it was measured, block by block (with
the bookkeeping of a block from Python, ``launch["block"]``, which a run's driver does not
pay). The :class:`Profile` holds them with this machine's ceilings
(:class:`Ceilings`) for a roofline: each block a point at (flops per byte, flops per
second), measured and predicted.

What the numbers mean:

- ``measured_seconds``: a block's median over the ``repeat`` block-by-block runs, from its
  start to the next block's start (its bookkeeping included: lent draws, SYNCs, DELs). The
  blocks run as the run's driver runs them: a one-instruction block below ``min_size``
  calls its serial kernel when a driver runs the kernels
  (:attr:`~fusionlab.backend.numba.driver.Runs.driven`), NumPy otherwise;
- ``run_seconds``: the median of ``repeat`` whole runs by the driver, interleaved with the
  block-by-block runs; ``between_seconds``: ``run_seconds`` less the blocks' medians (at
  least 0): the driver's Python between the kernels and the allocation of arrays. Block by
  block pays Python's bookkeeping per block, which a driver does not, so the blocks'
  medians may add up to more than a run (``between_seconds`` is then 0);
- the kernels read the draws capture recorded (no fresh draws are timed on either side).

:func:`why_slower` says where a run slower than NumPy's spent its time (:class:`SlowReason`);
:attr:`Profile.model_error` how far the model is from the clock, block by block.

Examples
--------
>>> from fusionlab.ir.examples import fig3
>>> from fusionlab.pipeline.config import PipelineConfig
>>> from fusionlab.support.timing import Ticks
>>> p = profile(fig3(), PipelineConfig("greedy", "bohrium", min_size=0), repeat=2, clock=Ticks())
>>> [(k.block, k.runs.value, k.measured_seconds) for k in p.kernels]   # one tick a block
[(1, 'kernel', 1.0), (2, 'kernel', 1.0), (3, 'kernel', 1.0), (4, 'kernel', 1.0)]
>>> p.run_seconds, p.between_seconds   # a whole run: one tick, less than its blocks
(1.0, 0.0)
>>> sorted(p.to_dict())   # doctest: +NORMALIZE_WHITESPACE
['algorithm', 'between_seconds', 'ceilings', 'cost_model', 'kernels', 'model_error', 'numpy_seconds',
 'repeat', 'run_seconds', 'why_slower']
>>> [w.reason.value for w in why_slower(p, numpy_seconds=0.5)]   # parallel kernels on 4 elements
['small_arrays']
"""

from __future__ import annotations

import enum
import math
import statistics
import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from fusionlab.ir.bytecode import Instruction, Opcode, OpFamily, Program
from fusionlab.costs.timemodel import (
    BlockTime, MachineFigures, TimeModel, contraction_flops, load_figures,
)
from fusionlab.analysis.wsp import WSPGraph
from fusionlab.backend.numba.contract import serial_library_blas
from fusionlab.backend.numba.driver import Driver
from fusionlab.backend.numba.guards import RecordedSizeMismatch
from fusionlab.backend.numba.plan import DEFAULT_MIN_SIZE, BlockPlan, KernelCache, NumpyRuns, Plan, run_plan
from fusionlab.runtime.reference import Externals, Storage
from fusionlab.pipeline.caches import PipelineCaches
from fusionlab.pipeline.config import PipelineConfig

__all__ = ["profile", "profile_plans", "Profile", "KernelTiming", "BlockRuns", "Ceilings", "ModelError", "Why",
           "SlowReason", "why_slower", "block_flops", "miss_reason", "miss_kind", "MissKind", "format_profile", "SMALL_PARALLEL_ELEMENTS",
           "LAUNCH_FACTOR", "PREDICTED_INSTRUCTIONS", "WORST_MISSES", "TINY_ELEMENTS"]

#: A parallel kernel on fewer elements than this spends more waking its threads (3-10 µs a
#: loop on the 2-core machines here) than computing: "arrays too small for a parallel loop".
SMALL_PARALLEL_ELEMENTS = 1 << 16
#: A kernel measured within this many times its launch cost (the model's) is a launch.
LAUNCH_FACTOR = 3.0
#: A batch longer than this without a WSP graph kept is not predicted (building its graph
#: again takes about as long as partitioning it did): its blocks' predictions are ``None``.
PREDICTED_INSTRUCTIONS = 2_000
#: Fewer elements than this make a tiny array (the backend's default ``min_size``): a
#: block's fixed costs, which the model prices from a few calibrated figures, dominate it.
TINY_ELEMENTS = DEFAULT_MIN_SIZE
#: The misses a profile's ``model_error`` lists.
WORST_MISSES = 5


class BlockRuns(enum.Enum):
    """What runs a block."""

    #: its compiled kernel (a parallel or a serial one)
    KERNEL = "kernel"
    #: NumPy, instruction by instruction (a library call, one call cheaper than a kernel,
    #: an instruction the backend does not compile)
    NUMPY = "numpy"
    #: an opaque call: NumPy's own function on the arrays (``np.sort``, ``np.linalg.solve``)
    OPAQUE = "opaque"


@dataclass(frozen=True)
class KernelTiming:
    """One block of the profiled partition: measured, predicted and its work.

    ``batch`` and ``block`` are 1-based (``block`` as the views number the partition's
    blocks; the pieces of a block compiled as several kernels share its number),
    ``instructions`` the block's 1-based instruction numbers. ``read_bytes`` and
    ``write_bytes`` are the ``time`` model's (the views the block reads and writes outside
    itself), ``flops`` its floating-point work (:func:`block_flops`), ``bound`` what the
    model says limits it (``"memory"``, ``"compute"``, ``"launch"``; ``None`` without a
    prediction).
    """

    batch: int
    block: int
    instructions: tuple[int, ...]
    runs: BlockRuns
    parallel: bool
    measured_seconds: float
    predicted_seconds: float | None
    read_bytes: int
    write_bytes: int
    flops: int
    bound: str | None
    label: str
    #: the largest iteration space of its computing instructions (elements)
    elements: int = 0
    #: the launch part of the model's prediction (a call from Python and its arguments)
    launch_seconds: float | None = None
    #: an instruction of the block computes in complex numbers
    complex_dtype: bool = False
    #: the block's position in its batch's plan (0-based: ``run_plan``'s key)
    position: int = 0
    #: bytes of memory the block's run allocates or copies: arrays it is the first to use
    #: (allocated and zeroed, or an input copied in) and borrowed arrays it writes (a lent
    #: draw or a synced array, copied first)
    first_touch_bytes: int = 0
    #: bytes of the arrays the block frees (its DELs of arrays with memory of their own)
    freed_bytes: int = 0
    #: the run's first parallel kernel (it wakes Numba's threads, asleep between runs)
    first_parallel: bool = False
    #: it filters, gathers or counts into bins: positions that depend on the data
    data_dependent: bool = False
    #: the bytes the block run just before it moved (its caches' state)
    after_bytes: int = 0
    #: an instruction of the block computes in booleans or integers narrower than 64 bits
    #: (the model prices them at the int64 figures)
    narrow_integers: bool = False

    @property
    def bytes(self) -> int:
        """Bytes read and written (the model's)."""
        return self.read_bytes + self.write_bytes

    @property
    def intensity(self) -> float | None:
        """Arithmetic intensity, flops per byte (``None`` when it moves no bytes or does no
        floating-point work: no point on a roofline)."""
        return self.flops / self.bytes if self.flops > 0 and self.bytes > 0 else None

    @property
    def measured_flops(self) -> float | None:
        """Floating-point operations per second measured (``None``: no flops, or no time)."""
        return self.flops / self.measured_seconds if self.flops > 0 and self.measured_seconds > 0 else None

    @property
    def predicted_flops(self) -> float | None:
        """Floating-point operations per second predicted."""
        p = self.predicted_seconds
        return self.flops / p if self.flops > 0 and p is not None and p > 0 else None

    @property
    def ratio(self) -> float | None:
        """Predicted over measured seconds (``None`` when either is not positive)."""
        p = self.predicted_seconds
        return p / self.measured_seconds if p is not None and p > 0 and self.measured_seconds > 0 else None

    @property
    def number(self) -> str:
        """``"batch.block"``, how the views label the block (``"1.3"``)."""
        return f"{self.batch}.{self.block}"

    def to_dict(self) -> dict[str, Any]:
        """The report's entry (``profile.kernels[*]``, docs/explorer-protocol.md)."""
        return {"batch": self.batch, "block": self.block, "instructions": list(self.instructions),
                "runs": self.runs.value, "parallel": self.parallel, "measured_seconds": _finite(self.measured_seconds),
                "predicted_seconds": _finite(self.predicted_seconds), "bytes": int(self.bytes),
                "flops": int(self.flops), "bound": self.bound, "label": self.label}


@dataclass(frozen=True)
class Ceilings:
    """This machine's roofs, from the ``time`` model's figures (``fusionlab calibrate``, or
    the defaults without a calibration).

    - ``memory_bytes_per_second``: ``bandwidth["memory"]["read"]["parallel"]``, a parallel
      kernel reading arrays larger than the last-level cache (never below the serial figure);
    - ``cache_bytes_per_second``: ``bandwidth["cache"]["read"]["parallel"]``, the same for
      arrays that fit the last-level cache;
    - ``flops_per_second``: ``1 / ops["arithmetic"]["float64"]["parallel"]``, element-wise
      float64 arithmetic by a parallel kernel (one operation an element);
    - ``label``: where the figures come from.
    """

    memory_bytes_per_second: float
    cache_bytes_per_second: float
    flops_per_second: float
    label: str

    @classmethod
    def of(cls, figures: MachineFigures) -> "Ceilings":
        """The ceilings of ``figures``.

        >>> from fusionlab.costs.timemodel import default_figures
        >>> c = Ceilings.of(default_figures())
        >>> c.memory_bytes_per_second, c.cache_bytes_per_second, round(c.flops_per_second / 1e9)
        (33000000000.0, 177000000000.0, 50)
        """
        bw = figures.bandwidth
        memory = max(bw["memory"]["read"]["parallel"], bw["memory"]["read"]["serial"])
        cache = max(bw["cache"]["read"]["parallel"], bw["cache"]["read"]["serial"])
        per = figures.ops["arithmetic"]["float64"]
        seconds = min(per["parallel"], per["serial"])
        return cls(float(memory), float(cache), 1.0 / seconds if seconds > 0 else math.inf, figures.label)

    @property
    def ridge(self) -> float:
        """The intensity (flops per byte) where the memory roof meets the compute roof."""
        return self.flops_per_second / self.memory_bytes_per_second

    def to_dict(self) -> dict[str, Any]:
        """The report's ``profile.ceilings``."""
        return {"memory_bytes_per_second": self.memory_bytes_per_second,
                "cache_bytes_per_second": self.cache_bytes_per_second,
                "flops_per_second": _finite(self.flops_per_second), "label": self.label}


@dataclass(frozen=True)
class ModelError:
    """How far the ``time`` model is from the clock, block by block: each ratio predicted /
    measured, the median of ``|log ratio|`` (0: exact; ``log 2`` = 0.69: a factor of two
    either way) and the blocks it misses most, with why (:func:`miss_reason`)."""

    ratios: tuple[tuple[KernelTiming, float], ...]

    @property
    def median_abs_log_ratio(self) -> float | None:
        """The median of ``|log(predicted / measured)|`` (``None``: nothing predicted)."""
        return statistics.median(abs(math.log(r)) for _, r in self.ratios) if self.ratios else None

    @property
    def median_ratio(self) -> float | None:
        """The median of predicted / measured (below 1: the model is optimistic)."""
        return statistics.median(r for _, r in self.ratios) if self.ratios else None

    def worst(self, n: int = WORST_MISSES) -> list[tuple[KernelTiming, float, str]]:
        """The ``n`` blocks with the largest ``|log ratio|``: (block, ratio, reason)."""
        ranked = sorted(self.ratios, key=lambda kr: -abs(math.log(kr[1])))[:n]
        return [(k, r, miss_reason(k)) for k, r in ranked]

    def to_dict(self) -> dict[str, Any]:
        """The report's ``profile.model_error``."""
        return {"median_abs_log_ratio": _finite(self.median_abs_log_ratio),
                "worst": [{"batch": k.batch, "block": k.block, "predicted_seconds": _finite(k.predicted_seconds),
                           "measured_seconds": _finite(k.measured_seconds), "reason": why}
                          for k, _, why in self.worst()]}


class SlowReason(enum.Enum):
    """Where a fused run slower than NumPy's spent its time (:func:`why_slower`)."""

    #: opaque calls NumPy runs: fusion cannot touch them
    OPAQUE_CALLS = "opaque_calls"
    #: blocks NumPy runs instruction by instruction (no kernel)
    NUMPY_BLOCKS = "numpy_blocks"
    #: many kernels, each about its launch cost
    LAUNCHES = "launches"
    #: parallel kernels on arrays too small to pay for waking the threads
    SMALL_ARRAYS = "small_arrays"
    #: the run outside its blocks: the driver's Python, allocation
    DRIVER_OVERHEAD = "driver_overhead"


@dataclass(frozen=True)
class Why:
    """One reason a run is slower than NumPy's: its seconds (of one run) and a sentence."""

    reason: SlowReason
    seconds: float
    detail: str

    def to_dict(self) -> dict[str, Any]:
        """The report's ``profile.why_slower[*]`` (and a comparison row's ``why_slower``)."""
        return {"reason": self.reason.value, "seconds": _finite(self.seconds), "detail": self.detail}


@dataclass(frozen=True)
class Profile:
    """A profiled partition: its blocks (:class:`KernelTiming`, those that compute, in the
    order they run), the whole run's median ``run_seconds`` and the part outside the blocks
    (``between_seconds``), this machine's :class:`Ceilings`, the ``repeat`` runs timed and
    NumPy eager's seconds for the same cell when known (``numpy_seconds``).
    ``values``: what the last block-by-block run computed (the target's variables)."""

    kernels: tuple[KernelTiming, ...]
    run_seconds: float
    between_seconds: float
    ceilings: Ceilings
    repeat: int
    numpy_seconds: float | None = None
    algorithm: str = ""
    cost_model: str = ""
    min_size: int = DEFAULT_MIN_SIZE
    #: what ran the whole runs ("python driver", "block by block", ...)
    driver: str = ""
    #: the Numba threads of the last run, and why ("2 threads: 2 of 2 cores free")
    threads: str = ""
    values: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def model_error(self) -> ModelError:
        """Each block's predicted / measured and their median ``|log ratio|``."""
        return ModelError(tuple((k, r) for k in self.kernels if (r := k.ratio) is not None))

    @property
    def blocks_seconds(self) -> float:
        """The blocks' medians added up."""
        return sum(k.measured_seconds for k in self.kernels)

    def why_slower(self) -> list["Why"]:
        """:func:`why_slower` against this profile's ``numpy_seconds``."""
        return why_slower(self, self.numpy_seconds)

    def with_numpy(self, seconds: float | None) -> "Profile":
        """This profile with NumPy eager's seconds (for :func:`why_slower`)."""
        return replace(self, numpy_seconds=seconds)

    def to_dict(self) -> dict[str, Any]:
        """The report's ``profile`` section (docs/explorer-protocol.md, "profile")."""
        return {"algorithm": self.algorithm, "cost_model": self.cost_model, "repeat": self.repeat,
                "run_seconds": _finite(self.run_seconds), "numpy_seconds": _finite(self.numpy_seconds),
                "between_seconds": _finite(self.between_seconds),
                "kernels": [k.to_dict() for k in self.kernels], "ceilings": self.ceilings.to_dict(),
                "why_slower": [w.to_dict() for w in self.why_slower()],
                "model_error": self.model_error.to_dict()}


# -- the work of a block -----------------------------------------------------------------

def _elements(ins: Instruction) -> int:
    domain = ins.domain
    if domain is not None:
        return math.prod(domain)
    return max((v.size for v in ins.outputs), default=0)


def block_flops(program: Program, instructions: Sequence[int]) -> int:
    """The floating-point work of ``instructions`` (0-based) of ``program``, in element
    operations: an element-wise computation (unary, binary, ternary) counts its output's
    elements, a reduction, scan or histogram its input's, a contraction its multiply-adds
    (:func:`~fusionlab.costs.timemodel.contraction_flops`). Copies, generators, filters,
    gathers, opaque calls and system instructions count none (they move data; what an
    opaque function computes is NumPy's).

    >>> from fusionlab.ir.examples import fig3
    >>> p = fig3()
    >>> block_flops(p, [4, 5]), block_flops(p, [8, 9, 10])   # ADD A, A, D[:-1]; COPY: none
    (4, 12)
    """
    total = 0
    for i in instructions:
        ins = program[i]
        op = ins.opcode
        if op in OpFamily.CONTRACTION:
            total += contraction_flops(ins)
        elif op in OpFamily.REDUCTION or op in OpFamily.SCAN or op in OpFamily.HISTOGRAM:
            total += ins.views_in[0].size if ins.views_in else 0
        elif op in OpFamily.UNARY or op in OpFamily.BINARY or op in OpFamily.TERNARY:
            total += _elements(ins)
    return total


class _Memory:
    """What the storage of a block-by-block run does to memory, block by block: the bytes of
    the arrays a block is the first to use (allocated, zeroed, or an input copied in; again
    after a DEL) and of the borrowed arrays it writes (a lent draw or a synced array, copied
    before the write). A kernel uses its arguments' arrays only (contracted ones get no
    memory)."""

    def __init__(self) -> None:
        self.used: set[str] = set()
        self.borrowed: set[str] = set()

    def block(self, program: Program, bp: BlockPlan, spec: Any) -> tuple[int, int]:
        """The bytes ``bp`` allocates or copies when it runs, and those it frees (``spec``:
        the kernel that runs it)."""
        for base, _ in bp.lend:
            self.used.add(base.name)
            self.borrowed.add(base.name)
        bound = set(bp.bind)
        computing = [i for i in bp.instructions if program[i].opcode not in OpFamily.SYSTEM and i not in bound]
        views = list(spec.arguments) if spec is not None else [v for i in computing for v in program[i].views_in
                                                               + program[i].outputs]
        first = 0
        for v in views:
            if v.base.name not in self.used:
                self.used.add(v.base.name)
                first += v.base.nbytes
        for name, base in {v.base.name: v.base for i in computing for v in program[i].writes()}.items():
            if name in self.borrowed:
                self.borrowed.discard(name)
                first += base.nbytes
        freed = 0
        for i in bp.instructions:
            ins = program[i]
            if ins.opcode is Opcode.SYNC:   # the array is borrowed from then on
                self.borrowed.add(ins.views_in[0].base.name)
            elif ins.opcode is Opcode.DEL:   # its next use allocates again
                base = ins.outputs[0].base
                if base.name in self.used and base.name not in self.borrowed:   # memory of its own, given back
                    freed += base.nbytes
                self.used.discard(base.name)
                self.borrowed.discard(base.name)
        return first, freed


#: opcodes whose positions depend on the data (filters, gathers, histograms)
_DATA_DEPENDENT = OpFamily.FILTER | OpFamily.GATHER | OpFamily.HISTOGRAM


def _label(program: Program, instructions: Sequence[int], most: int = 4) -> str:
    """The block's computing instructions in a few words: their opcodes in order (an opaque
    call by its function's name), ``+N more`` past ``most``."""
    names: list[str] = []
    for i in instructions:
        ins = program[i]
        if ins.opcode in OpFamily.SYSTEM:
            continue
        name = str(ins.attr("name") or ins.opcode.name) if ins.opcode in OpFamily.OPAQUE else ins.opcode.name
        if name not in names:
            names.append(name)
    shown = ", ".join(names[:most])
    return shown + (f" +{len(names) - most} more" if len(names) > most else "")


def _complex(program: Program, instructions: Sequence[int]) -> bool:
    return any(v.dtype.startswith("complex") for i in instructions for v in program[i].views_in + program[i].outputs)


def _narrow(program: Program, instructions: Sequence[int]) -> bool:
    """Whether an instruction computes in booleans or integers of fewer than 8 bytes."""
    for i in instructions:
        for v in program[i].outputs:
            dt = np.dtype(v.dtype)
            if dt.kind in "biu" and dt.itemsize < 8:
                return True
    return False


def _computes(program: Program, bp: BlockPlan) -> bool:
    """Whether a block computes anything (blocks of DELs and SYNCs, or of lent draws only,
    are bookkeeping: their time is the run's, outside the blocks)."""
    if bp.numpy is NumpyRuns.NOTHING_TO_COMPUTE:
        return False
    return any(program[i].opcode not in OpFamily.SYSTEM for i in bp.instructions)


def _shown_number(instructions: Sequence[int], shown: Sequence[Sequence[int]] | None, position: int) -> int:
    """The 1-based number of the block of ``shown`` (the partition as the views list it)
    holding most of ``instructions``; ``position + 1`` without one."""
    if not shown:
        return position + 1
    of = {i: k for k, b in enumerate(shown) for i in b}
    votes: dict[int, int] = {}
    for i in instructions:
        if i in of:
            votes[of[i]] = votes.get(of[i], 0) + 1
    if not votes:
        return position + 1
    return min(votes, key=lambda k: (-votes[k], k)) + 1


class _Predictions:
    """The ``time`` model's block times per plan, kept per program signature and blocks
    (the batches of a loop are alike: one graph and one pricing for all of them)."""

    def __init__(self, model: TimeModel, caches: PipelineCaches | None) -> None:
        self.model, self.caches = model, caches
        self.kept: dict[Any, list[BlockTime] | None] = {}

    def __call__(self, p: Plan, externals: Externals) -> list[BlockTime | None]:
        program = p.program
        blocks = [bp.instructions for bp in p.blocks]
        opaque = tuple(externals.seconds.get(ins.attr("key")) for ins in program if ins.opcode in OpFamily.OPAQUE)
        key = (program.signature(), tuple(blocks), opaque)
        if key not in self.kept:
            graph = self.caches.graphs.get(program) if self.caches is not None else None
            if not (isinstance(graph, WSPGraph) and graph.program is program):
                graph = None
            if graph is None and len(program) > PREDICTED_INSTRUCTIONS:
                self.kept[key] = None
            else:
                self.kept[key] = self.model.block_times(program, blocks, graph)
        got = self.kept[key]
        return [None] * len(blocks) if got is None else list(got)


# -- profiling ---------------------------------------------------------------------------

def profile_plans(
    plans: Sequence[Plan],
    externals: Externals,
    inputs: Mapping[str, np.ndarray],
    cache: KernelCache,
    *,
    batches: Sequence[Program],
    figures: MachineFigures | None = None,
    min_size: int = DEFAULT_MIN_SIZE,
    repeat: int = 5,
    clock: Callable[[], float] = time.perf_counter,
    driver: str = "python",
    numpy_seconds: float | None = None,
    shown: Sequence[Sequence[Sequence[int]] | None] | None = None,
    batch_numbers: Sequence[int] | None = None,
    caches: PipelineCaches | None = None,
    algorithm: str = "",
    cost_model: str = "",
    seconds: float | None = None,
) -> Profile:
    """Profile a run of ``plans`` (one per batch, in order, on one storage, as a driver runs
    them): one warm-up (which compiles), then ``repeat`` rounds of a block-by-block run, each
    block timed on ``clock``, and a whole run by the run's driver.

    Parameters
    ----------
    plans, externals, inputs, cache
        What :class:`~fusionlab.backend.numba.driver.Driver` takes: the plans, the recorded
        draws and opaque functions, the inputs, the kernel cache (kernels compiled before are
        reused).
    batches
        The batches the plans run (the prepared programs, one per plan: ``Plan.program``),
        on which the model prices the blocks (their WSP graphs from ``caches``).
    figures
        The ``time`` model's figures (this machine's calibration by default).
    min_size
        The configuration's ``min_size`` (the model's parallel threshold).
    repeat
        Timed rounds (at least 1).
    clock
        Seconds, read around each block and each whole run (tests inject their own).
    driver
        The driver's mode (``"python"``, ``"numba"``, ``"blocks"``), as ``run`` takes it.
    numpy_seconds
        NumPy eager's seconds for the same cell, when known (:func:`why_slower`).
    shown
        Per batch, the partition as the views number its blocks (0-based instructions);
        ``None``: the plans' own order.
    batch_numbers
        Per plan, its batch's 1-based number in the views (``None``: 1, 2, ...).
    caches
        The pipeline's caches: the WSP graphs kept price the blocks without building them again.
    algorithm, cost_model
        What made the partition (the report's labels).
    seconds
        The timed rounds' budget on the wall clock (``None``: none): fewer rounds than
        ``repeat`` when a round (about twice the block-by-block warm-up) would not fit, at
        least one; ``Profile.repeat`` says how many ran.

    Examples
    --------
    >>> from fusionlab.ir.examples import fig3
    >>> from fusionlab.backend.numba.plan import plan
    >>> program = fig3()
    >>> p = plan(program, [[i] for i in range(17)], min_size=0)
    >>> from fusionlab.support.timing import Ticks
    >>> prof = profile_plans([p], Externals(), {}, KernelCache(), batches=[program], repeat=1, clock=Ticks())
    >>> len(prof.kernels), {k.runs.value for k in prof.kernels}, prof.repeat
    (11, {'kernel'}, 1)
    """
    if repeat < 1:
        raise ValueError(f"repeat must be at least 1, not {repeat}")
    plans = list(plans)
    if len(batches) != len(plans) or any(b is not p.program for b, p in zip(batches, plans)):
        raise ValueError("give the batches the plans run, one per plan (Plan.program): the blocks are priced on them")
    figures = figures if figures is not None else load_figures()
    inputs = dict(inputs)
    runner = Driver(plans, externals, cache, inputs, mode=driver)
    runner()   # the warm-up: compiles every kernel (and a compiled driver)
    kernels_on = runner.fallback is None
    serial = runner.kind.driven   # a driver calls the serial kernels NumPy runs block by block
    blas = any(k.library_blas for p in plans for bp in p.blocks for k in (bp.kernel, bp.serial) if k is not None)

    def blocks_once(per: list[dict[int, float]] | None) -> dict[str, np.ndarray]:
        choice = runner.choice   # the threads and schedule the driver's last run set
        ch = choice.threads * runner.chunks_per_thread if choice is not None and choice.chunksize else 0
        storage = Storage(inputs, pool=cache.pool)
        synced: dict[str, np.ndarray] = {}
        with serial_library_blas(blas):
            for k, p in enumerate(plans):
                synced.update(run_plan(p, storage, externals, cache, chunks=ch, kernels=kernels_on,
                                       block_timings=None if per is None else per[k], clock=clock,
                                       serial_kernels=serial))
        return synced

    started = time.perf_counter()
    try:
        synced = blocks_once(None)   # the block-by-block warm-up
    except RecordedSizeMismatch:   # a size recorded at capture did not hold: NumPy runs it all, as the driver did
        kernels_on = False
        started = time.perf_counter()
        synced = blocks_once(None)
    if seconds is not None:   # rounds of a block-by-block run and a whole run: about twice the warm-up each
        one = 2 * (time.perf_counter() - started)
        repeat = max(1, min(repeat, int(seconds / one) if one > 0 else repeat))
    rounds: list[list[dict[int, float]]] = []
    runs: list[float] = []
    for _ in range(repeat):
        per: list[dict[int, float]] = [{} for _ in plans]
        synced = blocks_once(per)
        rounds.append(per)
        t = clock()
        runner()
        runs.append(clock() - t)
    # priced as the blocks were measured: block by block (each block's bookkeeping from Python,
    # ``launch["block"]``; a lone instruction NumPy runs at least a NumPy call from the executor)
    model = TimeModel(figures, min_size, opaque_seconds=externals.seconds, by_blocks=True)
    predict = _Predictions(model, caches)
    out: list[KernelTiming] = []
    memory = _Memory()   # which arrays have memory, and which are borrowed, as the run goes
    for k, p in enumerate(plans):
        program = p.program
        number = batch_numbers[k] if batch_numbers is not None else k + 1
        times = predict(p, externals)
        blocks_shown = shown[k] if shown is not None else None
        for pos, bp in enumerate(p.blocks):
            spec = (bp.compiled if serial else bp.kernel) if kernels_on else None
            first, freed = memory.block(program, bp, spec if spec is not None and spec.key not in cache.failed else None)
            if not _computes(program, bp):
                continue
            if any(program[i].opcode in OpFamily.OPAQUE for i in bp.instructions):
                runs_by = BlockRuns.OPAQUE
            elif spec is not None and spec.key not in cache.failed:
                runs_by = BlockRuns.KERNEL
            else:
                runs_by = BlockRuns.NUMPY
            bt = times[pos]
            computing = [i for i in bp.instructions if program[i].opcode not in OpFamily.SYSTEM]
            out.append(KernelTiming(
                batch=number, block=_shown_number(bp.instructions, blocks_shown, pos), instructions=tuple(bp.numbered),
                runs=runs_by, parallel=runs_by is BlockRuns.KERNEL and spec is not None and spec.parallel_iterations > 0,
                measured_seconds=statistics.median(r[k].get(pos, 0.0) for r in rounds),
                predicted_seconds=None if bt is None else bt.seconds,
                read_bytes=0 if bt is None else bt.read_bytes, write_bytes=0 if bt is None else bt.write_bytes,
                flops=block_flops(program, computing), bound=None if bt is None else bt.bound,
                label=_label(program, computing), elements=max((_elements(program[i]) for i in computing), default=0),
                launch_seconds=None if bt is None else bt.launch, complex_dtype=_complex(program, computing),
                position=pos, first_touch_bytes=first, freed_bytes=freed,
                data_dependent=any(program[i].opcode in _DATA_DEPENDENT for i in computing),
                narrow_integers=_narrow(program, computing)))
    out = [replace(t, after_bytes=out[j - 1].bytes) if j else t for j, t in enumerate(out)]
    first_parallel = next((j for j, t in enumerate(out) if t.parallel), None)
    if first_parallel is not None:
        out[first_parallel] = replace(out[first_parallel], first_parallel=True)
    run_seconds = statistics.median(runs)
    between = max(0.0, run_seconds - sum(t.measured_seconds for t in out))
    choice = runner.choice
    threads = "" if choice is None else f"{choice.threads} thread{'s' if choice.threads != 1 else ''}: {choice.reason}"
    return Profile(tuple(out), run_seconds, between, Ceilings.of(figures), repeat, numpy_seconds, algorithm,
                   cost_model, min_size, runner.runs, threads, dict(synced))


def profile(target: Any, config: PipelineConfig | None = None, *, caches: PipelineCaches | None = None,
            cache: KernelCache | None = None, repeat: int = 5, figures: MachineFigures | None = None,
            numpy_seconds: float | None = None, driver: str = "python", clock: Callable[[], float] = time.perf_counter,
            batch_numbers: Sequence[int] | None = None, seconds: float | None = None) -> Profile:
    """Profile ``target`` (a :class:`~fusionlab.capture.Capture` or a program) under
    ``config`` as :func:`fusionlab.pipeline.run` runs it: the pipeline's preparing passes and
    planning (:func:`~fusionlab.pipeline.prepare_kept`, :func:`~fusionlab.pipeline.plans`),
    then :func:`profile_plans`. ``config``: ``run``'s default (greedy under Bohrium, every
    pass). ``caches``: the pipeline's caches (an explorer's or a comparison's, so the plans
    profiled are the plans they timed); ``cache``: the kernel cache. The blocks are numbered
    as the partition lists them (before rematerialisation moved a map: a block is the one
    that holds most of its instructions). ``Profile.values`` are the target's variables as
    the profiled run computed them. The other arguments are :func:`profile_plans`'.

    >>> from fusionlab.capture import capture
    >>> cap = capture("import numpy as np\\nx = np.arange(8.0)\\ny = np.sqrt(x) * 2 + x")
    >>> p = profile(cap, PipelineConfig("greedy", "bohrium", min_size=0), repeat=1)
    >>> [(k.block, k.runs.value, k.flops) for k in p.kernels], float(p.values["y"][1])
    ([(1, 'kernel', 24)], 3.0)
    """
    from fusionlab.capture import Capture
    from fusionlab.pipeline import plans as plan_batches, prepare_kept
    from fusionlab.pipeline.runner import run_config

    config = config if config is not None else run_config("greedy", "bohrium", DEFAULT_MIN_SIZE, True)
    caches = caches if caches is not None else PipelineCaches()
    prepared = prepare_kept(target, config, caches)
    planned = plan_batches(prepared.programs, config, caches)
    shown = [r.blocks if r is not None else b for r, b in zip(planned.results, planned.blocks)]
    got = profile_plans(planned.plans, prepared.externals, prepared.inputs, cache if cache is not None else KernelCache(),
                        batches=prepared.programs, figures=figures, min_size=config.min_size, repeat=repeat,
                        clock=clock, driver=driver, numpy_seconds=numpy_seconds, shown=shown,
                        batch_numbers=batch_numbers, caches=caches, algorithm=config.algorithm,
                        cost_model=config.model_name, seconds=seconds)
    values = target.values_from(dict(got.values)) if isinstance(target, Capture) else dict(got.values)
    return replace(got, values=values)


# -- why slower, and where the model misses ------------------------------------------------

def _seconds(s: float) -> str:
    """Seconds in the unit that reads best (``"3.2 µs"``, ``"12.5 ms"``, ``"1.20 s"``)."""
    if s < 1e-3:
        return f"{s * 1e6:.3g} µs"
    if s < 1.0:
        return f"{s * 1e3:.3g} ms"
    return f"{s:.3g} s"


def _blocks(kernels: Sequence[KernelTiming], most: int = 6) -> str:
    shown = ", ".join(k.number for k in kernels[:most])
    return shown + (f" and {len(kernels) - most} more" if len(kernels) > most else "")


def why_slower(profile: Profile, numpy_seconds: float | None) -> list[Why]:
    """Where a fused run slower than NumPy eager's (``numpy_seconds``) spent its time,
    largest first; empty when it is not slower (or NumPy's time is not known).

    - :attr:`SlowReason.OPAQUE_CALLS`: the blocks of opaque calls NumPy runs;
    - :attr:`SlowReason.NUMPY_BLOCKS`: the blocks NumPy runs instruction by instruction;
    - :attr:`SlowReason.SMALL_ARRAYS`: parallel kernels on fewer than
      :data:`SMALL_PARALLEL_ELEMENTS` elements (waking the threads costs more than the work);
    - :attr:`SlowReason.LAUNCHES`: two or more of the other kernels, each measured within
      :data:`LAUNCH_FACTOR` times its launch cost;
    - :attr:`SlowReason.DRIVER_OVERHEAD`: ``between_seconds``, the run outside its blocks.

    >>> c = Ceilings(3e10, 1e11, 5e10, "test figures")
    >>> k = KernelTiming(1, 1, (1,), BlockRuns.OPAQUE, False, 0.004, 0.001, 8, 8, 0, "launch", "np.sort")
    >>> [(w.reason.value, w.seconds) for w in why_slower(Profile((k,), 0.005, 0.001, c, 3), 0.002)]
    [('opaque_calls', 0.004), ('driver_overhead', 0.001)]
    >>> why_slower(Profile((k,), 0.005, 0.001, c, 3), 0.01)
    []
    """
    if numpy_seconds is None or not math.isfinite(numpy_seconds) or profile.run_seconds <= numpy_seconds:
        return []
    run = profile.run_seconds
    said = f"of the fused run's {_seconds(run)} (NumPy eager: {_seconds(numpy_seconds)})"
    out: list[Why] = []
    def took(reason: SlowReason, ks: Sequence[KernelTiming], what: str, then: str) -> None:
        """``what`` (a count of blocks, with their numbers) took their seconds of the run: ``then``."""
        if ks:
            s = sum(k.measured_seconds for k in ks)
            out.append(Why(reason, s, f"{what} (blocks {_blocks(ks)}) took {_seconds(s)} {said}{then}"))

    opaque = [k for k in profile.kernels if k.runs is BlockRuns.OPAQUE]
    names = ", ".join(dict.fromkeys(k.label for k in opaque))
    took(SlowReason.OPAQUE_CALLS, opaque, f"{_count(len(opaque), 'opaque call')} NumPy runs ({names})",
         ": fusion does not change them; write them with array operations fusionlab records, or move them out of "
         "the loop")
    numpy = [k for k in profile.kernels if k.runs is BlockRuns.NUMPY]
    took(SlowReason.NUMPY_BLOCKS, numpy, f"{_count(len(numpy), 'block')} run by NumPy instruction by instruction, "
         "not by a kernel", "; the code view says why each runs with NumPy")
    kernels = [k for k in profile.kernels if k.runs is BlockRuns.KERNEL]
    small = [k for k in kernels if k.parallel and k.elements < SMALL_PARALLEL_ELEMENTS]
    took(SlowReason.SMALL_ARRAYS, small, f"{_count(len(small), 'parallel kernel')} on fewer than "
         f"{SMALL_PARALLEL_ELEMENTS:,} elements", ": waking the threads costs more than their work; a larger "
         "min_size (`--min-size`) runs them serially")
    counted = {id(k) for k in small}
    launches = [k for k in kernels if id(k) not in counted and k.launch_seconds is not None
                and k.measured_seconds <= LAUNCH_FACTOR * k.launch_seconds]
    if len(launches) >= 2:
        s = sum(k.measured_seconds for k in launches)
        each = s / len(launches)
        out.append(Why(SlowReason.LAUNCHES, s, (
            f"{len(launches)} kernels (blocks {_blocks(launches)}) each take about their launch cost ({_seconds(each)} "
            f"on average): {_seconds(s)} {said} goes to calling small kernels; fewer, larger blocks (another "
            "partition) or larger arrays pay for them")))
    if profile.between_seconds > 0:
        out.append(Why(SlowReason.DRIVER_OVERHEAD, profile.between_seconds, (
            f"{_seconds(profile.between_seconds)} {said} is outside the blocks: the driver's Python between the "
            f"kernels and the allocation of arrays ({profile.driver or 'the run'})")))
    out.sort(key=lambda w: -w.seconds)
    return out


def _count(n: int, thing: str) -> str:
    """"1 block", "3 blocks"."""
    return f"{n} {thing}{'s' if n != 1 else ''}"


class MissKind(enum.Enum):
    """Why the ``time`` model misses a block (:func:`miss_kind`), first match first."""

    OPAQUE_CALL = "opaque call"
    COMPLEX_DTYPE = "complex dtype"
    NUMPY_BLOCK = "NumPy-run block"
    THREADS_WAKING = "first parallel kernel"
    ALLOCATION = "allocation or copy"
    FREES = "frees large arrays"
    AFTER_STREAMING = "after a large block"
    DATA_DEPENDENT = "filter, gather or histogram"
    NARROW_INTEGERS = "narrow integers"
    TINY_ARRAY = "tiny array"
    LAUNCH = "launch-dominated"
    MEMORY_SLOWER = "memory bound, slower"
    MEMORY_FASTER = "memory bound, faster"
    COMPUTE = "compute bound"
    UNKNOWN = "no breakdown"


def miss_kind(k: KernelTiming) -> MissKind:
    """What the ``time`` model does not see of block ``k`` (an opaque call, a complex dtype,
    a NumPy-run block; when it is more than twice slower than predicted, the run's first
    parallel kernel waking the threads, more memory allocated or copied than its traffic,
    large arrays freed, or a small block right after one that streamed megabytes;
    a filter's data-dependent positions; more than twice faster, narrow integers priced as
    int64; a tiny array, a launch-dominated block), else which
    of its parts (memory or compute) is off.

    >>> k = KernelTiming(1, 2, (3,), BlockRuns.KERNEL, True, 2e-4, 1e-6, 64, 64, 8, "memory", "ADD",
    ...                  elements=1 << 20, first_parallel=True)
    >>> miss_kind(k), miss_kind(replace(k, first_parallel=False))
    (<MissKind.THREADS_WAKING: 'first parallel kernel'>, <MissKind.MEMORY_SLOWER: 'memory bound, slower'>)
    """
    if k.runs is BlockRuns.OPAQUE:
        return MissKind.OPAQUE_CALL
    if k.complex_dtype:
        return MissKind.COMPLEX_DTYPE
    if k.runs is BlockRuns.NUMPY:
        return MissKind.NUMPY_BLOCK
    slow = k.ratio is not None and k.ratio < 0.5
    if slow and k.first_parallel:
        return MissKind.THREADS_WAKING
    if slow and k.first_touch_bytes >= 4 * max(k.bytes, 1) and k.first_touch_bytes >= 1 << 16:
        return MissKind.ALLOCATION
    if slow and k.freed_bytes >= 4 * max(k.bytes, 1) and k.freed_bytes >= 1 << 20:
        return MissKind.FREES
    if slow and k.after_bytes >= 1 << 20 and k.after_bytes >= 64 * max(k.bytes, 1):
        return MissKind.AFTER_STREAMING
    if k.data_dependent:
        return MissKind.DATA_DEPENDENT
    if k.narrow_integers and k.ratio is not None and k.ratio > 2:
        return MissKind.NARROW_INTEGERS
    if k.elements < TINY_ELEMENTS:
        return MissKind.TINY_ARRAY
    if k.bound == "launch":
        return MissKind.LAUNCH
    if k.bound == "memory":
        return MissKind.MEMORY_SLOWER if k.ratio is not None and k.ratio < 1 else MissKind.MEMORY_FASTER
    if k.bound == "compute":
        return MissKind.COMPUTE
    return MissKind.UNKNOWN


def miss_reason(k: KernelTiming) -> str:
    """:func:`miss_kind` of block ``k`` in a sentence, with its figures.

    >>> k = KernelTiming(1, 2, (3,), BlockRuns.KERNEL, False, 2e-5, 1e-6, 64, 64, 8, "launch", "ADD", elements=8)
    >>> miss_reason(k)
    'tiny array (8 elements): fixed costs dominate'
    """
    kind = miss_kind(k)
    slower = k.ratio is not None and k.ratio < 1
    text = {
        MissKind.OPAQUE_CALL: f"opaque call ({k.label}): NumPy's own function, priced by its seconds at capture",
        MissKind.COMPLEX_DTYPE: "complex dtype: the model prices complex arithmetic as float64",
        MissKind.NUMPY_BLOCK: "run by NumPy instruction by instruction: priced as one kernel",
        MissKind.THREADS_WAKING: ("the run's first parallel kernel: it wakes Numba's threads (asleep between runs), "
                                  "which the model does not price"),
        MissKind.ALLOCATION: (f"allocates or copies {k.first_touch_bytes:,} bytes, more than its traffic (a fresh "
                              "array zeroed, an input copied in, or a lent draw copied before a write), which the "
                              "model does not price"),
        MissKind.FREES: (f"frees {k.freed_bytes:,} bytes of arrays (its DELs), more than its traffic: block by "
                         "block, memory the pool does not keep goes back to the system, which the model does not "
                         "price (a run's driver keeps its buffers)"),
        MissKind.AFTER_STREAMING: (f"runs right after a block that moved {k.after_bytes:,} bytes: its call and "
                                   "bookkeeping find Python's objects evicted from the caches (and the threads of "
                                   "that parallel loop still spinning), which the model does not price"),
        MissKind.DATA_DEPENDENT: ("a filter, gather or histogram: positions that depend on the data, which the model "
                                  "prices as element-wise work"),
        MissKind.NARROW_INTEGERS: ("booleans or narrow integers (uint8, int32, ...): priced at the int64 figures "
                                   "(the calibration measures float64, float32 and int64), while a kernel "
                                   "vectorises them several times wider"),
        MissKind.TINY_ARRAY: f"tiny array ({k.elements:,} elements): fixed costs dominate",
        MissKind.LAUNCH: "launch-dominated: the call from Python is most of the prediction",
        MissKind.MEMORY_SLOWER: ("memory bound, slower than the calibrated bandwidth (page faults, a working set "
                                 "larger than the program's peak, other load)"),
        MissKind.MEMORY_FASTER: "memory bound, faster than predicted (its arrays fit a faster cache than the program's peak)",
        MissKind.COMPUTE: "compute bound: its opcodes' throughput differs from the calibration" + (
            " (slower)" if slower else " (faster)"),
        MissKind.UNKNOWN: "no breakdown",
    }
    return text[kind]


# -- text ----------------------------------------------------------------------------------

def _rate(x: float | None, unit: str) -> str:
    if x is None or not math.isfinite(x):
        return "—"
    for scale, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if x >= scale:
            return f"{x / scale:.3g} {prefix}{unit}"
    return f"{x:.3g} {unit}"


def format_profile(profile: Profile) -> str:
    """The profile as text: a table of the blocks (measured, predicted, their ratio, bytes,
    flops, what bounds them), the roofline in words (each block's share of the memory roof
    and of the compute roof), why the run is slower than NumPy's when it is, and the model's
    error.

    >>> c = Ceilings(3e10, 1e11, 5e10, "test figures")
    >>> k = KernelTiming(1, 1, (1, 2), BlockRuns.KERNEL, True, 1e-3, 5e-4, 8_000_000, 8_000_000, 1_000_000, "memory",
    ...                  "ADD, SQRT", elements=1_000_000)
    >>> print(format_profile(Profile((k,), 1.2e-3, 2e-4, c, 5)).splitlines()[-3])
      1.1: 0.0625 flop/byte, 16 GB/s = 53% of the memory roof, 2% of the compute roof (memory bound predicted)
    """
    head = (f"profile of {profile.algorithm or '?'} / {profile.cost_model or '?'}: {profile.repeat} timed runs after a "
            f"warm-up; a run takes {_seconds(profile.run_seconds)} "
            f"({'; '.join(x for x in (profile.driver or 'driver', profile.threads) if x)})")
    if profile.numpy_seconds is not None:
        head += f", NumPy eager {_seconds(profile.numpy_seconds)}"
    head += (f"; {_seconds(profile.between_seconds)} of it outside the blocks (the driver's Python, allocation); "
             f"the blocks' medians add up to {_seconds(profile.blocks_seconds)}")
    cols = f"{'block':>7} {'runs':<7}{'par':<4}{'measured':>11}{'predicted':>11}{'ratio':>7}{'bytes':>13}" \
           f"{'flops':>13} {'bound':<8} label"
    lines = [head, cols, "-" * len(cols)]
    for k in profile.kernels:
        pred = "—" if k.predicted_seconds is None else _seconds(k.predicted_seconds)
        ratio = "—" if k.ratio is None else f"{k.ratio:.2f}"
        lines.append(f"{k.number:>7} {k.runs.value:<7}{'yes' if k.parallel else 'no':<4}"
                     f"{_seconds(k.measured_seconds):>11}{pred:>11}{ratio:>7}{k.bytes:>13,}{k.flops:>13,} "
                     f"{k.bound or '—':<8} {k.label}")
    c = profile.ceilings
    lines.append(f"roofline: memory {_rate(c.memory_bytes_per_second, 'B/s')}, cache {_rate(c.cache_bytes_per_second, 'B/s')}, "
                 f"compute {_rate(c.flops_per_second, 'FLOP/s')} ({c.label})")
    for k in profile.kernels:
        if k.bytes <= 0 or k.measured_seconds <= 0:
            continue
        achieved = k.bytes / k.measured_seconds
        text = f"  {k.number}: "
        text += f"{k.intensity:.3g} flop/byte, " if k.intensity is not None else "no flops, "
        text += f"{_rate(achieved, 'B/s')} = {achieved / c.memory_bytes_per_second:.0%} of the memory roof"
        if k.measured_flops is not None:
            text += f", {k.measured_flops / c.flops_per_second:.0%} of the compute roof"
        if k.bound:
            text += f" ({k.bound} bound predicted)"
        lines.append(text)
    why = profile.why_slower()
    if why:
        lines.append("why slower than NumPy, largest first:")
        lines += [f"  - {w.reason.value} {_seconds(w.seconds)}: {w.detail}" for w in why]
    err = profile.model_error
    if err.ratios:
        med = err.median_abs_log_ratio or 0.0
        lines.append(f"the time model: median |log(predicted / measured)| {med:.2f} (a factor of {math.exp(med):.2f}), "
                     f"median predicted / measured {err.median_ratio:.2f}")
        for k, r, reason in err.worst(3):
            lines.append(f"  {k.number}: predicted {_seconds(k.predicted_seconds or 0.0)}, measured "
                         f"{_seconds(k.measured_seconds)} ({r:.2f}x): {reason}")
    return "\n".join(lines)


def _finite(x: float | None) -> float | None:
    """JSON has no NaN or infinity: ``None`` for them (and for ``None``)."""
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


