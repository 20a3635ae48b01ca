"""The reference executor: a program run instruction by instruction with NumPy.

It defines what a program means. Under a partition it runs the blocks in a topological
order of the partition graph and each block's instructions in program order, so any legal
partition must give the same arrays as program order — the property the fused backends
are tested against.

Examples
--------
>>> from fusionlab.examples import fig3
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
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from ..bytecode import Base, Instruction, Literal, Opcode, OpFamily, Program, View

__all__ = ["Externals", "OPAQUE_FUNCTIONS", "run_reference", "block_order", "Storage"]

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


class Storage:
    """The memory of a running program: a flat array per live base."""

    def __init__(self, inputs: Mapping[str, np.ndarray] | None = None) -> None:
        self.flat: dict[str, np.ndarray] = {}
        self.inputs = dict(inputs or {})

    def ensure(self, base: Base) -> np.ndarray:
        got = self.flat.get(base.name)
        if got is None:
            got = np.zeros(max(base.size, 1), dtype=base.dtype)
            if base.name in self.inputs:
                got[: base.size] = np.asarray(self.inputs[base.name], dtype=base.dtype).reshape(-1)
            self.flat[base.name] = got
        return got

    def view(self, v: View) -> np.ndarray:
        flat = self.ensure(v.base)
        item = flat.itemsize
        return np.lib.stride_tricks.as_strided(
            flat[v.offset:], shape=v.shape, strides=tuple(s * item for s in v.strides)
        )

    def array(self, base: Base) -> np.ndarray:
        """A copy of a base's contents in its shape."""
        return self.ensure(base)[: base.size].reshape(base.shape).copy()


def _operand(storage: Storage, x: View | Literal) -> Any:
    return storage.view(x) if isinstance(x, View) else x.value


def execute_instruction(ins: Instruction, storage: Storage, externals: Externals, synced: dict[str, np.ndarray]) -> None:
    """Run one instruction on ``storage``."""
    op = ins.opcode
    if op is Opcode.DEL:
        storage.flat.pop(ins.outputs[0].base.name, None)
        return
    if op is Opcode.SYNC:
        base = ins.views_in[0].base
        synced[base.name] = storage.array(base)
        return
    out = storage.view(ins.outputs[0])
    args = [_operand(storage, x) for x in ins.inputs]
    if op in OpFamily.UNARY | OpFamily.BINARY:
        op.ufunc(*args, out=out, casting="unsafe")
    elif op is Opcode.COPY:
        np.copyto(out, args[0], casting="unsafe")
    elif op is Opcode.WHERE:
        np.copyto(out, np.where(*args), casting="unsafe")
    elif op in OpFamily.REDUCTION:
        np.copyto(out, op.ufunc.reduce(args[0], axis=ins.attr("axis")), casting="unsafe")
    elif op in OpFamily.SCAN:
        axis = ins.attr("axis")
        src = args[0].reshape(-1) if axis is None else args[0]
        np.copyto(out, op.ufunc.accumulate(src, axis=0 if axis is None else axis), casting="unsafe")
    elif op is Opcode.RANGE:
        n = out.size
        idx = np.arange(n).reshape(out.shape)
        start, step = ins.attr("start", 0), ins.attr("step", 1)
        np.copyto(out, idx if (start, step) == (0, 1) else start + idx * step, casting="unsafe")
    elif op is Opcode.RANDOM:
        key = ins.attr("key")
        if key is not None:
            if key not in externals.arrays:
                raise KeyError(f"RANDOM key={key}: its values were not recorded (run it from its Capture)")
            np.copyto(out, externals.arrays[key].reshape(out.shape), casting="unsafe")
        else:
            np.copyto(out, np.random.default_rng(ins.attr("seed", 0)).random(out.shape), casting="unsafe")
    elif op is Opcode.OPAQUE:
        key, name = ins.attr("key"), ins.attr("name")
        fn = externals.functions.get(key) if key is not None else OPAQUE_FUNCTIONS.get(name)
        if fn is None:
            raise KeyError(f"OPAQUE name={name!r} key={key!r}: no function to run it")
        result = fn(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
        np.copyto(out, np.asarray(result).reshape(out.shape), casting="unsafe")
    else:  # pragma: no cover - every opcode family is handled above
        raise NotImplementedError(op)


def block_order(program: Program, blocks: Sequence[Sequence[int]]) -> list[int]:
    """Instruction indices in execution order: the blocks in a topological order of the
    partition graph (smallest first instruction first among the ready ones), and each
    block in program order. Raises ``ValueError`` for a cyclic partition."""
    from ..wsp import PartitionState, WSPGraph

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
    """
    storage = storage if storage is not None else Storage(inputs)
    if inputs and storage.inputs is not inputs:
        storage.inputs.update(inputs)
    externals = externals or Externals()
    order: Iterable[int] = range(len(program)) if partition is None else block_order(program, partition)
    synced: dict[str, np.ndarray] = {}
    for i in order:
        execute_instruction(program[i], storage, externals, synced)
    return synced
