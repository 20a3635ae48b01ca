"""The reference executor: a program run instruction by instruction with NumPy.

It defines what a program means. Under a partition it runs the blocks in a topological
order of the partition graph and each block's instructions in program order, so any legal
partition must give the same arrays as program order — the property the fused backends
are tested against.

Examples
--------
>>> from fusionlab.ir.examples import fig3
>>> out = run_reference(fig3())
>>> out["D"]
array([0., 0., 0., 0., 0.])
>>> from fusionlab import parse
>>> p = parse("ARRAY X float64[4]\\nARRAY Y float64[4]\\nRANGE X\\nMULTIPLY Y, X, X\\nSYNC Y")
>>> run_reference(p)["Y"]
array([0., 1., 4., 9.])
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from fusionlab.ir.bytecode import (
    HISTOGRAM_RANGE, OPCODES, Base, Instruction, Literal, Opcode, OpFamily, Program, View,
    loop_dtypes,
)
from fusionlab.ir.subscripts import numpy_call

__all__ = ["Externals", "OPAQUE_FUNCTIONS", "run_reference", "block_order", "Storage", "Pool", "gather",
           "bincount"]

#: NumPy functions an OPAQUE instruction may name in the text format.
OPAQUE_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "np.sort": np.sort,
    "np.matmul": np.matmul,
    "np.dot": np.dot,
    "np.linalg.solve": np.linalg.solve,
    "np.linalg.inv": np.linalg.inv,
    "np.transpose": np.transpose,
    "np.negative": np.negative,
}


@dataclass
class Externals:
    """What a captured program needs beyond its text: the values of RANDOM instructions
    and the functions of OPAQUE instructions, by their ``key`` attribute."""

    arrays: dict[int, np.ndarray] = field(default_factory=dict)
    functions: dict[int, Callable[..., Any]] = field(default_factory=dict)
    #: seconds each OPAQUE call took when capture ran it (the time model's price for it)
    seconds: dict[int, float] = field(default_factory=dict)
    #: for a RANDOM draw, the same call again (the same distribution, sizes and arguments)
    #: on a generator of its own: what drawing it costs, which a timing may add to the fused
    #: side so that both sides draw (:mod:`fusionlab.pipeline.rounds`); the user's streams
    #: are never touched
    redraws: dict[int, Callable[[], Any]] = field(default_factory=dict)


class Pool:
    """Freed array memory by (dtype, size), for the next array of that type and size:
    fresh memory costs page faults, reused memory does not. Holds at most ``limit`` bytes,
    16 arrays per kind, and no arrays under 64 KiB (NumPy's own cache serves those)."""

    def __init__(self, limit: int = 1 << 30) -> None:
        self.free: dict[tuple[str, int], list[np.ndarray]] = {}
        self.bytes = 0
        self.limit = limit

    def take(self, key: tuple[str, int]) -> np.ndarray | None:
        got = self.free.get(key)
        if not got:
            return None
        a = got.pop()
        self.bytes -= a.nbytes
        return a

    def give(self, key: tuple[str, int], a: np.ndarray) -> None:
        if a.nbytes < 1 << 16 or self.bytes + a.nbytes > self.limit:
            return
        got = self.free.setdefault(key, [])
        if len(got) < 16:
            got.append(a)
            self.bytes += a.nbytes

    def __bool__(self) -> bool:
        return self.bytes > 0


class Storage:
    """The memory of a running program: a flat array per live base.

    A freed base's memory is kept for the next base of the same type and size (fresh
    memory costs page faults, reused memory does not), and a base may *borrow* an array it
    does not own — a recorded random draw — until something writes it (:meth:`own`).
    """

    def __init__(self, inputs: Mapping[str, np.ndarray] | None = None, pool: Pool | None = None) -> None:
        self.flat: dict[str, np.ndarray] = {}
        self.inputs = dict(inputs or {})
        self.borrowed: set[str] = set()
        # freed memory; pass one pool to successive storages to reuse memory across runs
        # too (as malloc does for NumPy)
        self.pool = pool if pool is not None else Pool()
        self._keys: dict[str, tuple[str, int]] = {}
        #: every base that ever had memory here (allocated, reused from the pool, or
        #: borrowed): what a run really allocated, checked against what the cost models
        #: count as contracted
        self.allocated: set[str] = set()
        #: the bases whose memory was zeroed when allocated (a pass over memory each): those
        #: not written whole before being read (:mod:`fusionlab.backend.numba.zeroing`)
        self.zeroed: set[str] = set()

    def ensure(self, base: Base, zero: bool = True) -> np.ndarray:
        """The base's memory, allocated on first use: zeros (or, with ``zero=False``, whatever
        a reused buffer held — for a base all of whose elements are written before any is read),
        or the input."""
        got = self.flat.get(base.name)
        if got is None:
            self.allocated.add(base.name)
            key = (base.dtype, max(base.size, 1))
            got = self.pool.take(key)
            if got is not None:
                if zero or base.name in self.inputs:
                    got.fill(0)
            else:
                # not np.zeros when unasked: calloc clears memory malloc reuses (8 MB a step
                # of the wave equation once glibc serves such sizes from its heap)
                got = np.zeros(key[1], dtype=base.np_dtype) if zero else np.empty(key[1], dtype=base.np_dtype)
            if zero and base.name not in self.inputs:
                self.zeroed.add(base.name)
            self._keys[base.name] = key
            if base.name in self.inputs:
                got[: base.size] = np.asarray(self.inputs[base.name], dtype=base.dtype).reshape(-1)
            self.flat[base.name] = got
        return got

    def release(self, name: str) -> None:
        """Free a base (DEL); its memory waits for the next base of its type and size."""
        got = self.flat.pop(name, None)
        if got is None:
            return
        key = self._keys.pop(name, None)
        if name in self.borrowed:
            self.borrowed.discard(name)
            return
        if key is not None:
            self.pool.give(key, got)

    def borrow(self, base: Base, array: np.ndarray) -> bool:
        """Let ``base`` use ``array`` (C-contiguous, of its type and size) without a copy,
        until :meth:`own` is called before a write. False if the array does not fit."""
        if array.dtype != base.np_dtype or array.size != base.size or not array.flags.c_contiguous \
                or base.size == 0:
            return False
        self.release(base.name)
        self.allocated.add(base.name)
        self.flat[base.name] = array.reshape(-1)
        self.borrowed.add(base.name)
        return True

    def own(self, name: str) -> None:
        """Copy a borrowed base's array before it is written."""
        if name in self.borrowed:
            self.borrowed.discard(name)
            got = self.flat[name] = self.flat[name].copy()
            self._keys[name] = (got.dtype.name, got.size)

    def view(self, v: View) -> np.ndarray:
        flat = self.flat.get(v.base.name)
        if flat is None:
            flat = self.ensure(v.base)
        if v.covers_base and flat.size == v.size:   # the common case, without strides arithmetic
            return flat if v.ndim == 1 else flat.reshape(v.shape)
        item = flat.itemsize
        return np.ndarray(v.shape, flat.dtype, flat, v.offset * item, tuple(s * item for s in v.strides))

    def share(self, base: Base) -> np.ndarray:
        """A base's contents in its shape, without a copy: the base counts as borrowed from
        then on, so a later write copies it first (:meth:`own`) and DEL does not reuse it."""
        got = self.ensure(base)
        self.borrowed.add(base.name)
        return got[: base.size].reshape(base.shape)

    def array(self, base: Base) -> np.ndarray:
        """A copy of a base's contents in its shape."""
        return self.ensure(base)[: base.size].reshape(base.shape).copy()


def _operand(storage: Storage, x: View | Literal) -> Any:
    return storage.view(x) if isinstance(x, View) else x.value


def execute_instruction(ins: Instruction, storage: Storage, externals: Externals, synced: dict[str, np.ndarray]) -> None:
    """Run one instruction on ``storage``."""
    op = ins.opcode
    if op is Opcode.DEL:
        storage.release(ins.outputs[0].base.name)
        return
    if op is Opcode.SYNC:
        base = ins.views_in[0].base
        synced[base.name] = storage.array(base)
        return
    if storage.borrowed and ins.outputs[0].base.name in storage.borrowed:
        storage.own(ins.outputs[0].base.name)
    out = storage.view(ins.outputs[0])
    args = [_operand(storage, x) for x in ins.inputs]
    if op in OpFamily.UNARY | OpFamily.BINARY:
        # the loop the kernels compute in (bytecode.loop_dtypes decides for both); the
        # result is then cast to the output's type, as an assignment does
        loop = loop_dtypes(ins)
        if loop is None:
            OPCODES[op].numpy(*args, out=out, casting="unsafe")
        else:
            OPCODES[op].numpy(*args, out=out, casting="unsafe", signature=loop)
    elif op is Opcode.COPY:
        np.copyto(out, args[0], casting="unsafe")
    elif op is Opcode.WHERE:
        np.copyto(out, OPCODES[op].numpy(*args), casting="unsafe")
    elif op in OpFamily.REDUCTION:
        np.copyto(out, OPCODES[op].numpy(args[0], axis=ins.attr("axis")), casting="unsafe")
    elif op in OpFamily.SCAN:
        axis = ins.attr("axis")
        src = args[0].reshape(-1) if axis is None else args[0]
        np.copyto(out, OPCODES[op].numpy(src, axis=0 if axis is None else axis), casting="unsafe")
    elif op is Opcode.RANGE:
        n = out.size
        idx = np.arange(n).reshape(out.shape)
        start, step = ins.attr("start", 0), ins.attr("step", 1)
        np.copyto(out, idx if (start, step) == (0, 1) else start + idx * step, casting="unsafe")
        if ins.attr("stop") is not None and n:   # linspace's last element: ``stop`` exactly
            out.reshape(-1)[-1] = ins.attr("stop")
    elif op is Opcode.RANDOM:
        key = ins.attr("key")
        if key is not None:
            if key not in externals.arrays:
                raise KeyError(f"RANDOM key={key}: its values were not recorded (run it from its Capture)")
            np.copyto(out, externals.arrays[key].reshape(out.shape), casting="unsafe")
        else:
            np.copyto(out, np.random.default_rng(ins.attr("seed", 0)).random(out.shape), casting="unsafe")
    elif op in OpFamily.FILTER:
        _compress(ins, out, args[0], args[1])
    elif op in OpFamily.GATHER:
        np.copyto(out, gather(args[0], args[1:], out.shape, ins.attr("axis", 0)))
    elif op in OpFamily.HISTOGRAM:
        np.copyto(out, bincount(args[0], args[1] if len(args) > 1 else None, out.size))
    elif op in OpFamily.CONTRACTION:
        np.copyto(out, numpy_call(ins.attr("via", "einsum"), ins.attr("subscripts"))(*args), casting="unsafe")
    elif op is Opcode.OPAQUE:
        key, name = ins.attr("key"), ins.attr("name")
        fn = externals.functions.get(key) if key is not None else OPAQUE_FUNCTIONS.get(name)
        if fn is None:
            raise KeyError(f"OPAQUE name={name!r} key={key!r}: no function to run it")
        result = fn(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
        np.copyto(out, np.asarray(result).reshape(out.shape), casting="unsafe")
    else:  # pragma: no cover - every opcode family is handled above
        raise NotImplementedError(op)


def gather(src: np.ndarray, idx: Sequence[np.ndarray], shape: tuple[int, ...], axis: int = 0) -> np.ndarray:
    """GATHER's meaning in NumPy: ``src`` indexed by the index arrays (broadcast to the
    output ``shape``) on its axes ``axis ..``, by the output's own first coordinates on the
    axes before and by its last coordinates on the rest. Negative indices wrap; an index
    out of range raises IndexError, as NumPy does.

    >>> a = np.arange(12.0).reshape(3, 4)
    >>> gather(a, [np.array([[2], [-3]])], (2, 4))
    array([[ 8.,  9., 10., 11.],
           [ 0.,  1.,  2.,  3.]])
    >>> gather(a, [np.array([0, 2]), np.array([3, -1])], (2,))
    array([ 3., 11.])
    >>> gather(a, [np.array([[-1]])], (3, 1), axis=1)
    array([[ 3.],
           [ 7.],
           [11.]])
    """
    k, r = len(idx), len(shape)
    keys = [np.broadcast_to(np.arange(src.shape[j]).reshape((-1,) + (1,) * (r - 1 - j)), shape)
            for j in range(axis)]   # a leading untouched axis: the output's matching coordinate
    keys += [np.broadcast_to(x, shape) for x in idx]
    for j in range(axis + k, src.ndim):   # a trailing one: likewise, from the end
        at = r - (src.ndim - j)
        keys.append(np.arange(src.shape[j]).reshape((-1,) + (1,) * (r - 1 - at)))
    return src[tuple(keys)]


def bincount(x: np.ndarray, weights: np.ndarray | None, length: int) -> np.ndarray:
    """BINCOUNT's meaning in NumPy: ``np.bincount(x, weights, minlength=length)``, whose
    length must be ``length`` (the bins recorded at capture): a value outside ``[0,
    length)`` raises ValueError, as NumPy does for a negative one.

    >>> bincount(np.array([0, 2, 2], dtype=np.uint8), None, 4)
    array([1, 0, 2, 0])
    >>> bincount(np.array([1, 3]), np.array([0.5, 2.0], dtype=np.float32), 4)
    array([0. , 0.5, 0. , 2. ])
    >>> bincount(np.array([4]), None, 4)
    Traceback (most recent call last):
    ...
    ValueError: BINCOUNT: a value is outside [0, L), the L bins recorded at capture (np.bincount raises for a negative value and would give more bins for a larger one); run the program on data like the data it was captured from, or capture it again
    """
    if x.size and (int(x.min()) < 0 or int(x.max()) >= length):
        raise ValueError(HISTOGRAM_RANGE)
    return np.bincount(x, weights, minlength=length)


def _compress(ins: Instruction, out: np.ndarray, data: np.ndarray, mask: np.ndarray) -> None:
    """COMPRESS: ``data[mask]`` in C order (elements for a mask of the data's shape, rows for
    a mask of its leading extents), into an output sized by the count recorded at capture;
    a mask selecting another count is an error (the program is a trace of a run)."""
    count = int(np.count_nonzero(mask))
    if count != out.shape[0]:
        what = "elements" if mask.ndim == data.ndim else "rows"
        raise ValueError(
            f"{ins.opcode.name}: the mask selects {count} {what} but the output "
            f"{ins.outputs[0].base.name} holds {out.shape[0]}, the count recorded at capture; run the "
            "program on the data it was captured from, or capture it again"
        )
    np.copyto(out, data[mask], casting="unsafe")


def block_order(program: Program, blocks: Sequence[Sequence[int]]) -> list[int]:
    """Instruction indices in execution order: the blocks in a topological order of the
    partition graph (smallest first instruction first among the ready ones), and each
    block in program order. Raises ``ValueError`` for a cyclic partition."""
    from fusionlab.analysis.wsp import PartitionState, WSPGraph

    state = PartitionState(WSPGraph(program), blocks)
    indeg = {b: len(state.pred[b]) for b in state.members}
    ready = [(state.first[b], b) for b, d in indeg.items() if d == 0]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        _, b = heapq.heappop(ready)
        order.extend(state.block(b))
        for s in state.succ[b]:
            indeg[s] -= 1
            if indeg[s] == 0:
                heapq.heappush(ready, (state.first[s], s))
    if len(order) != len(program):
        raise ValueError("the partition's blocks depend on each other in a cycle: no order can run them")
    return order


def run_reference(
    program: Program,
    partition: Sequence[Sequence[int]] | None = None,
    *,
    inputs: Mapping[str, np.ndarray] | None = None,
    externals: Externals | None = None,
    storage: Storage | None = None,
    order: Sequence[int] | None = None,
) -> dict[str, np.ndarray]:
    """Run ``program`` with NumPy; returns each synced base's contents at its last SYNC.

    Parameters
    ----------
    program
        The program.
    partition
        Blocks of 0-based instruction indices; blocks run in a topological order.
    inputs
        Initial contents of bases read before they are written (others start at zero).
    externals
        Recorded RANDOM values and OPAQUE functions of a captured program.
    storage
        Memory shared across calls (successive batches of one capture).
    order
        The instructions' order under ``partition``, as :func:`block_order` gives it
        (computed when ``None``): a caller replaying many alike batches (a loop's) computes
        it once, where each :func:`block_order` builds the batch's graph.
    """
    storage = storage if storage is not None else Storage(inputs)
    if inputs and storage.inputs is not inputs:
        storage.inputs.update(inputs)
    externals = externals or Externals()
    if order is None:
        order = range(len(program)) if partition is None else block_order(program, partition)
    synced: dict[str, np.ndarray] = {}
    for i in order:
        execute_instruction(program[i], storage, externals, synced)
    return synced
