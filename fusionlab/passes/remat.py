"""Rematerialisation by sinking: a map whose output is a temporary read only later is moved
to just before its first reader, so the reader's kernel computes it instead of loading it.

A captured program often computes a temporary in one kernel only for a kernel after a
barrier to read it: ``z = (values - values.mean()) / values.std()`` computes
``values - mean`` beside the sums of the standard deviation, stores it, and reads it back
once ``std`` is known. Moved next to its reader, the map fuses into the reader's kernel
and its output is contracted: the first kernel no longer writes it, and the second reads
the map's inputs instead of its output. The move is decided per map, before partitioning,
by :func:`sink_maps`; every map it leaves in place carries a :class:`SinkRefusal`.

The cost rule (bytes, as the Bohrium model counts them): the move is made only when the
map's array inputs hold at most as many bytes as its output, so the reader loads no more
than before and the output's store is saved. Legality: the output is written by the map
alone, covers its base and is freed in the batch (never synced: a user's array is stored
anyway); no instruction between the map and its first reader writes or frees a base the
map reads (the inputs the reader sees are the map's own) — except the DEL of a
one-element input, which moves with the map (a scalar's lifetime, no traffic) — and no
opaque instruction lies in between (it may touch anything). docs/passes.md ("Rematerialisation") has the rule.

Examples
--------
>>> from fusionlab import parse
>>> p = parse('''
... ARRAY x float64[100]
... ARRAY m float64[]
... ARRAY s float64[]
... ARRAY d float64[100]
... ARRAY z float64[100]
... SUBTRACT d, x, m
... ADD_REDUCE s, x, axis=None
... DIVIDE z, d, s
... DEL d
... SYNC z
... ''')
>>> got = sink_maps(p)
>>> [ins.opcode.name for ins in got.program]
['ADD_REDUCE', 'SUBTRACT', 'DIVIDE', 'DEL', 'SYNC']
>>> got.decisions[0].moved, got.decisions[0].reader
(True, 2)
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass
from typing import Mapping, Sequence

from fusionlab.ir.bytecode import Instruction, Opcode, OpFamily, Program

__all__ = ["SinkRefusal", "SinkDecision", "Sinking", "sink_maps", "Remat", "rematerialise", "CHECKS"]


class SinkRefusal(enum.Enum):
    """Why a map stays where it is."""

    OUTPUT_ALIVE = "its output is not freed in the batch (a user's array, synced or read later): stored anyway"
    PARTIAL_OUTPUT = "it writes part of its output's base, or another instruction writes that base too"
    IN_PLACE = "it reads its own output's base"
    NEXT_TO_READER = "its first reader follows it: nothing to move past"
    NO_READER = "nothing reads its output"
    MORE_BYTES = "its array inputs hold more bytes than its output: the reader would load more"
    INPUT_OVERWRITTEN = "a base it reads is written or freed before its first reader"
    OPAQUE_BETWEEN = "an opaque instruction lies between it and its first reader"
    SAME_BLOCK = "its first reader is in its block: its output is contracted there already"
    READ_ELSEWHERE = "its output is read or freed outside its first reader's block: stored anyway"
    SHAPE = "its first reader's block iterates over another shape"
    ILLEGAL_BLOCK = "in its reader's block the partition would be illegal (wsp.partition_problems)"
    BUDGET = "more candidates than the batch's budget of legality checks"


@dataclass(frozen=True)
class SinkDecision:
    """One element-wise map's decision: ``index`` and ``reader`` are 0-based positions in
    the original program (``reader``: its output's first reader, None if none); ``moved``
    says whether it now sits just before that reader, ``refusal`` why not."""

    index: int
    output: str
    reader: int | None
    refusal: SinkRefusal | None
    detail: str = ""
    #: DELs of scalar inputs between the map and its reader, moved to just after the map
    delayed: tuple[int, ...] = ()

    @property
    def moved(self) -> bool:
        return self.refusal is None


@dataclass(frozen=True)
class Sinking:
    """The program with the maps moved, the decisions, and ``order``: for each instruction
    of the new program, its position in the original."""

    program: Program
    decisions: tuple[SinkDecision, ...]
    order: tuple[int, ...]


def _bytes(ins: Instruction) -> tuple[int, int]:
    """Bytes of the map's array inputs (views of more than one element) and of its output."""
    out = ins.outputs[0]
    ins_bytes = sum(math.prod(v.shape) * v.base.np_dtype.itemsize for v in ins.views_in if math.prod(v.shape) > 1)
    return ins_bytes, math.prod(out.shape) * out.base.np_dtype.itemsize


@dataclass(frozen=True)
class _Uses:
    """Per base, in one walk of the program: its non-DEL writers and readers (positions in
    order), whether it is freed, whether it is synced."""

    writers: Mapping[str, tuple[int, ...]]
    readers: Mapping[str, tuple[int, ...]]
    freed: Mapping[str, int]
    synced: frozenset[str]


def _uses(program: Program) -> _Uses:
    writers: dict[str, list[int]] = {}
    readers: dict[str, list[int]] = {}
    freed: dict[str, int] = {}
    synced = set()
    for j, ins in enumerate(program):
        if ins.opcode is Opcode.DEL:
            freed[ins.outputs[0].base.name] = j
            continue
        if ins.opcode is Opcode.SYNC:
            synced.add(ins.views_in[0].base.name)
        for name in {v.base.name for v in ins.writes()}:
            writers.setdefault(name, []).append(j)
        for name in {v.base.name for v in ins.reads()}:
            readers.setdefault(name, []).append(j)
    return _Uses({k: tuple(v) for k, v in writers.items()}, {k: tuple(v) for k, v in readers.items()},
                 freed, frozenset(synced))


def _decide(program: Program, p: int, uses: _Uses) -> SinkDecision:
    """The decision for element-wise instruction ``p`` (one function: legality, then cost)."""
    ins = program[p]
    out = ins.outputs[0]
    name = out.base.name
    reader = next((j for j in uses.readers.get(name, ()) if j > p), None)
    if name not in uses.freed or name in uses.synced:
        return SinkDecision(p, name, reader, SinkRefusal.OUTPUT_ALIVE)
    if uses.writers.get(name) != (p,) or not out.covers_base:
        return SinkDecision(p, name, reader, SinkRefusal.PARTIAL_OUTPUT)
    inputs = {v.base.name for v in ins.views_in}
    if name in inputs:
        return SinkDecision(p, name, reader, SinkRefusal.IN_PLACE)
    if reader is None:
        return SinkDecision(p, name, None, SinkRefusal.NO_READER)
    if reader == p + 1:
        return SinkDecision(p, name, reader, SinkRefusal.NEXT_TO_READER)
    delayed = []
    for j in range(p + 1, reader):
        between = program[j]
        if between.opcode in OpFamily.OPAQUE:
            return SinkDecision(p, name, reader, SinkRefusal.OPAQUE_BETWEEN, f"instruction {j + 1}")
        hit = sorted(inputs & {w.base.name for w in between.writes()})
        if hit and between.opcode is Opcode.DEL and between.outputs[0].base.size == 1:
            delayed.append(j)   # a scalar input's DEL moves with the map: its lifetime, no traffic
        elif hit:
            return SinkDecision(p, name, reader, SinkRefusal.INPUT_OVERWRITTEN, f"{hit[0]} by instruction {j + 1}")
    got, stored = _bytes(ins)
    if got > stored:
        return SinkDecision(p, name, reader, SinkRefusal.MORE_BYTES, f"{got} > {stored} bytes")
    return SinkDecision(p, name, reader, None, f"{got} <= {stored} bytes", tuple(delayed))


def sink_maps(program: Program) -> Sinking:
    """Move each element-wise map whose output only later instructions read to just before
    its first reader, where the rules above allow it (see the module's docstring); no
    partition involved (:func:`rematerialise` moves maps into their readers' blocks).

    Moves only delay a map past instructions that neither read its output nor write its
    inputs, so every instruction still sees the values it saw; maps moved before the same
    reader keep their order.
    """
    uses = _uses(program)
    decisions = tuple(_decide(program, p, uses) for p, ins in enumerate(program)
                      if ins.opcode in OpFamily.ELEMENTWISE)
    order = _order(len(program), [d for d in decisions if d.moved])
    if order == tuple(range(len(program))):
        return Sinking(program, decisions, order)
    return Sinking(Program(program.bases, [program[p] for p in order]), decisions, order)


def _order(n: int, moved: Sequence[SinkDecision]) -> tuple[int, ...]:
    """The new program order (original positions): each moved map just before its first
    reader, the scalar DELs it delays just after it."""
    key = {p: float(p) for p in range(n)}
    for d in moved:
        key[d.index] = d.reader - 0.5   # type: ignore[operator]
        for j in d.delayed:
            key[j] = d.reader - 0.25   # type: ignore[operator]
    return tuple(sorted(range(n), key=lambda p: (key[p], p)))


@dataclass(frozen=True)
class Remat:
    """A partition after :func:`rematerialise`: its blocks (0-based positions in the
    unchanged program) and each map's decision."""

    blocks: tuple[tuple[int, ...], ...]
    decisions: tuple[SinkDecision, ...]


#: legality checks (each a walk of the partition) per batch: candidates beyond it are refused (BUDGET)
CHECKS = 8


def _placement(program: Program, d: SinkDecision, block_of: Mapping[int, int],
               blocks: Sequence[Sequence[int]], uses: _Uses) -> SinkRefusal | None:
    """Whether the map of ``d`` (legal to move, cheaper moved) may join its reader's block."""
    home, target = block_of[d.index], block_of[d.reader]   # type: ignore[index]
    if home == target:
        return SinkRefusal.SAME_BLOCK
    refs = [*uses.readers.get(d.output, ()), uses.freed[d.output]]
    if any(block_of[j] != target for j in refs):
        return SinkRefusal.READ_ELSEWHERE
    computing = [j for j in blocks[target] if program[j].domain is not None]
    if not computing or program[computing[0]].domain != program[d.index].domain:
        return SinkRefusal.SHAPE
    return None


def rematerialise(program: Program, blocks: Sequence[Sequence[int]]) -> Remat:
    """Move each map whose output is stored only for a later block into that block, where
    it is recomputed from its inputs and its output contracted (see the module's docstring).

    The program is not reordered: only the map (and the DELs of scalar inputs it delays)
    change block, so partitions keep indexing the batch as captured. The map's decision
    (legality, then bytes) comes first; then its first reader's block must be another block
    that holds every other use of the output and iterates over the map's shape; then the
    moved partition is checked whole by :func:`fusionlab.analysis.wsp.partition_problems` (at most
    :data:`CHECKS` times a batch). Each accepted move is kept for the next candidate's check.

    >>> from fusionlab import parse
    >>> p = parse("ARRAY x float64[100]\\nARRAY m float64[]\\nARRAY s float64[]\\nARRAY d float64[100]\\n"
    ...           "ARRAY z float64[100]\\nSUBTRACT d, x, m\\nADD_REDUCE s, x, axis=None\\nDIVIDE z, d, s\\n"
    ...           "DEL d\\nSYNC z")
    >>> got = rematerialise(p, [[0, 1], [2, 3, 4]])
    >>> got.blocks, got.decisions[0].moved
    (((1,), (0, 2, 3, 4)), True)
    """
    from fusionlab.analysis.wsp import WSPGraph, partition_problems   # the graph is built only for a candidate

    block_of = {i: k for k, b in enumerate(blocks) for i in b}
    members = [list(b) for b in blocks]
    out: list[SinkDecision] = []
    checks, graph = 0, None
    uses = _uses(program)
    for d in (_decide(program, p, uses) for p, ins in enumerate(program) if ins.opcode in OpFamily.ELEMENTWISE):
        why = d.refusal or _placement(program, d, block_of, members, uses)
        if why is None and checks >= CHECKS:
            why = SinkRefusal.BUDGET
        if why is not None:
            out.append(d if d.refusal else SinkDecision(d.index, d.output, d.reader, why, "", d.delayed))
            continue
        trial = [list(b) for b in members]
        target = block_of[d.reader]   # type: ignore[index]
        for j in (d.index, *d.delayed):
            trial[block_of[j]].remove(j)
            trial[target].append(j)
        checks += 1
        graph = graph or WSPGraph(program)
        problems = partition_problems(graph, [b for b in trial if b])
        if problems:
            out.append(SinkDecision(d.index, d.output, d.reader, SinkRefusal.ILLEGAL_BLOCK, problems[0], d.delayed))
            continue
        out.append(d)
        members = trial
        for j in (d.index, *d.delayed):
            block_of[j] = target
    return Remat(tuple(tuple(sorted(b)) for b in members if b), tuple(out))
