"""Numba source for one block: a ``prange`` loop nest with array contraction.

A block of fused instructions becomes one ``@numba.njit(parallel=True)`` function:

- the loop nest runs over the block's iteration space (the outer, parallel axis is the
  first one no axis-reduction reduces); one statement per instruction, in program order,
  named after the bytecode's arrays, with a comment naming the instruction;
- an array the block creates and frees, never syncs, and always accesses through one view
  of the iteration space's shape is *contracted*: a scalar local, never allocated;
- every other view is an argument, made by the caller from the program's storage;
- a reduction over everything accumulates per outer index into a small partial array,
  combined after the parallel loop; a reduction over one axis accumulates into its output,
  or, over the innermost loop's axis, into a scalar stored once after that loop;
  sibling reductions that leave no axis to run in parallel (row and column sums), or a full
  one beside one over axis 0, split axis 0 in ranges with partial results per range;
- a scan (004's scanomap) runs along its axis with the maps producing its input before it
  and element-wise consumers of its output after it: one-dimensional, in chunks, in two
  parallel passes (chunk totals, or local scans stored in a stored output; then the body,
  or the carry and the consumers, from each chunk's carry); n-dimensional,
  parallel over another axis with the scan axis innermost.

:func:`get_kernel` returns the source as data (a :class:`KernelSource`), or the reason the
block cannot be compiled; :mod:`fusionlab.execute.numba_backend` compiles and runs it.

Examples
--------
>>> from fusionlab import parse
>>> p = parse('''
... ARRAY A float64[100]
... ARRAY B float64[100]
... ARRAY T float64[100]
... MULTIPLY T, A, B
... ADD A, A, T
... DEL T
... ''')
>>> k = get_kernel(p, [0, 1, 2])
>>> k.contracted
('T',)
>>> print(k.source)  # doctest: +NORMALIZE_WHITESPACE
@numba.njit(parallel=True, error_model='numpy', cache=True)
def kernel(A, B, n0):
    # A = A
    # B = B
    for i0 in numba.prange(n0):
        T = A[i0] * B[i0]  # 1: MULTIPLY T, A, B
        A[i0] = A[i0] + T  # 2: ADD A, A, T
    # 3: DEL T (contracted: never allocated)
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Sequence

import numpy as np

from .bytecode import OPCODES, Instruction, Literal, Opcode, OpFamily, Program, View
from .codegen_contract import (
    TILE_ROWS, LibraryKernel, accumulate_lines, batch_tile_line, contraction_plan, row_lines, tile_lines,
)
from .costs import access_info
from .filters import filter_folds, loop_domains
from .text import format_instruction, format_view

__all__ = ["KernelSource", "Unsupported", "get_kernel", "loop_dtypes", "FilterPlan", "filter_plan"]

_CHUNK = 4096
#: ranges the first axis is split in when every axis is reduced (partial results per range)
_SPLIT = 64

#: dtypes Numba computes with as NumPy does (float16 and long double it does not)
_NUMBA_DTYPES = frozenset({"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                           "float32", "float64", "complex64", "complex128"})

_RESERVED = {"chunk", "np", "numba", "kernel", "range", "True", "False", "None", "fill", "sum", "prod", "max", "min",
             "all", "any", "full", "sp", "nsp", "nch", "tile", "rb"}


def _safe(name: str) -> str:
    """A Python identifier for an array name that cannot clash with the kernel's own."""
    import keyword

    if keyword.iskeyword(name) or name in _RESERVED or name[:1] in "injkr" and name[1:].isdigit() \
            or name.startswith(("acc", "rnd")) or re.search(r"_(row|w)\w*$", name) or re.fullmatch(r"u\d+", name) \
            or "_" in name and name.rsplit("_", 1)[1].isdigit():
        return f"{name}_"
    return name


def _identity(op: Opcode, dtype: str) -> str:
    """The reduction's starting value (the table's identity), typed as its output.

    >>> _identity(Opcode.MAXIMUM_REDUCE, "float32"), _identity(Opcode.MINIMUM_REDUCE, "int8")
    ('np.float32(-np.inf)', 'np.int8(127)')
    """
    value = OPCODES[op].identity_of(dtype)
    text = ("np.inf" if value > 0 else "-np.inf") if isinstance(value, float) and math.isinf(value) else repr(value)
    return f"{_np_type(dtype)}({text})"


#: literal exponents of a float POWER computed with ``sqrt`` instead of a ``pow`` call
_HALF_POWERS = frozenset({0.5, -0.5, 1.5, -1.5})


def _half_power(ins: Instruction, loop: tuple[np.dtype, ...] | None) -> float | None:
    """The exponent of ``x ** e`` (a float array, ``e`` a literal in ``_HALF_POWERS``) that
    :func:`_half_power_expr` computes, else ``None``.

    ``pow`` is a scalar library call (about 20 ns an element here, measured on the n-body
    pairs' ``** -1.5``) where ``sqrt`` and a division are vector instructions."""
    if ins.opcode is not Opcode.POWER or loop is None or loop[0].kind != "f" or loop[1] != loop[0]:
        return None
    e = ins.inputs[1]
    if not isinstance(e, Literal) or isinstance(e.value, bool) or not isinstance(e.value, (int, float)):
        return None
    return float(e.value) if float(e.value) in _HALF_POWERS else None


def _half_power_expr(x: str, e: float, dtype: np.dtype) -> str:
    """``x ** e`` with ``sqrt``: ``e == 0.5`` is ``np.sqrt(x)``, as NumPy computes it; the
    others follow C's ``pow`` on every special value (``-0.0``: ``sqrt`` gives ``-0.0``,
    ``+ 0`` makes it ``+0.0``; ``-inf``: ``sqrt`` gives nan, ``pow`` gives ``inf`` or 0) and
    round at most three times (within the checks' ULPS)."""
    if e == 0.5:
        return f"np.sqrt({x})"
    t = _np_type(dtype.name)
    root = f"(np.sqrt({x}) + {t}(0))"
    if e > 0:   # 1.5
        return f"({t}(np.inf) if {x} == {t}(-np.inf) else np.abs({x}) * {root})"
    # 1 / sqrt(x), cubed for -1.5: no intermediate overflows where the result is finite
    # (x * sqrt(x) would, and give 0 for a result in the subnormal range)
    r = f"({t}(1) / {root})"
    return f"({t}(0) if {x} == {t}(-np.inf) else {r if e == -0.5 else f'{r} * {r} * {r}'})"


def _np_type(dtype: str) -> str:
    return "np.bool_" if dtype == "bool" else f"np.{dtype}"


def loop_dtypes(ins: Instruction) -> tuple[np.dtype, ...] | None:
    """The dtypes NumPy computes an element-wise instruction in: its inputs' and its
    result's, as the ufunc's own type resolution picks them (NumPy 2, NEP 50: a Python
    scalar takes the array's type — ``float32_array * 0.2`` is a float32 product — and
    integer true division is float64). None for instructions that are not one ufunc call.

    The reference executor and the kernels both compute in these dtypes: the one place
    that decides them.

    >>> from fusionlab import parse
    >>> p = parse("ARRAY A float32[4]\\nARRAY B float32[4]\\nMULTIPLY B, A, 0.2")
    >>> [d.name for d in loop_dtypes(p[0])]
    ['float32', 'float32', 'float32']
    >>> p = parse("ARRAY A int32[4]\\nARRAY B float64[4]\\nDIVIDE B, A, 2")
    >>> [d.name for d in loop_dtypes(p[0])]
    ['float64', 'float64', 'float64']
    """
    op = ins.opcode
    if op not in OpFamily.UNARY | OpFamily.BINARY:
        return None
    ufunc = op.ufunc
    args: list[Any] = []
    for x in ins.inputs:
        if isinstance(x, View):
            args.append(np.dtype(x.dtype))
        elif isinstance(x.value, bool):   # a bool is a NumPy bool, not a weak scalar
            args.append(np.dtype(bool))
        else:
            args.append(type(x.value))   # int, float, complex: weak (NEP 50)
    if len(args) != ufunc.nin:
        return None
    try:
        loop = tuple(ufunc.resolve_dtypes(tuple(args) + (None,) * ufunc.nout))
    except (TypeError, ValueError, OverflowError):   # no loop: NumPy would have refused it at capture
        return None
    loop = _strong_literals(ins, args, loop)
    for x, dt in zip(ins.inputs, loop):
        # a comparison with a Python int outside the array's range (uint8 < -1) is exact in
        # NumPy 2, not cast: leave such an instruction to the operands' own types
        if isinstance(x, Literal) and type(x.value) is int and dt.kind in "iu" and \
                not np.iinfo(dt).min <= x.value <= np.iinfo(dt).max:
            return None
    return loop


def _strong_literals(ins: Instruction, args: list[Any], loop: tuple[np.dtype, ...]) -> tuple[np.dtype, ...]:
    """The loop again with the literals typed like the output, when that is the loop whose
    result the output has. A literal records a NumPy scalar's value, not its type: a NumPy
    scalar is strong under NEP 50 (``float32_array * np.float64(1.1)`` is a float64 product),
    and capture recorded the output base in the dtype NumPy gave it, so the output says so.

    >>> from fusionlab import parse
    >>> p = parse("ARRAY A float32[4]\\nARRAY B float64[4]\\nMULTIPLY B, A, 1.1")
    >>> [d.name for d in loop_dtypes(p[0])]
    ['float64', 'float64', 'float64']
    """
    if not ins.outputs or not any(isinstance(x, Literal) for x in ins.inputs):
        return loop
    out = np.dtype(ins.outputs[0].dtype)
    if loop[-1] == out:
        return loop
    strong = [out if isinstance(x, Literal) and not isinstance(x.value, bool) else a
              for x, a in zip(ins.inputs, args)]
    try:
        again = tuple(ins.opcode.ufunc.resolve_dtypes(tuple(strong) + (None,) * ins.opcode.ufunc.nout))
    except (TypeError, ValueError, OverflowError):
        return loop
    return again if again[-1] == out else loop


def _weak_result(ins: Instruction, xs: Sequence[View | Literal]) -> np.dtype:
    """``np.result_type`` of operands with Python scalars weak (NumPy 2), as ``np.where``."""
    return np.result_type(*[np.dtype(x.dtype) if isinstance(x, View) else x.value for x in xs])


class Unsupported(Exception):
    """Why a block is run by NumPy instead of a compiled kernel."""


@dataclass(frozen=True)
class KernelSource:
    """A block's kernel as data: its source, its arguments and what it contracted."""

    source: str
    arguments: tuple[View, ...]
    extents: tuple[int, ...]
    contracted: tuple[str, ...]
    instructions: tuple[int, ...]
    signature: str
    randoms: tuple[int, ...] = ()
    #: iterations of the ``prange`` loop (0: a serial kernel), for the run's schedule
    parallel_iterations: int = 0
    #: calls BLAS (``np.dot`` on tiles of a contraction): the driver sets SciPy's OpenBLAS
    #: to one thread while the run lasts (:func:`fusionlab.codegen_contract.serial_library_blas`)
    library_blas: bool = False

    @cached_property
    def extent_arguments(self) -> tuple[np.uint64, ...]:
        """The extents as the kernel takes them: unsigned, as its index arithmetic."""
        return tuple(np.uint64(n) for n in self.extents)

    @cached_property
    def key(self) -> str:
        """A short hash of the canonical signature (the kernel cache's key)."""
        return hashlib.sha1(self.signature.encode()).hexdigest()[:16]


def _literal(x: Literal) -> str:
    v = x.value
    if isinstance(v, float):
        if v != v:
            return "np.nan"
        if v in (float("inf"), float("-inf")):
            return "np.inf" if v > 0 else "-np.inf"
    return repr(v)


def _typed(text: str, x: View | Literal, dtype: np.dtype) -> str:
    """An operand's expression in ``dtype``: literals always typed, views when they differ."""
    if dtype.kind not in "biufc":
        return text
    if isinstance(x, Literal) or x.dtype != dtype.name:
        return f"{_np_type(dtype.name)}({text})"
    return text


def _base_coords(v: View, rank: int) -> tuple[tuple[int | None, int, int], ...] | None:
    """``v`` in its base's own coordinates: per base axis, the iteration axis that moves
    along it (or None), the step, and the start — or None when the view is not a product of
    per-axis ranges of its base (a reshaped view, a zero-dimensional one)."""
    base = v.base
    if v.ndim == 0 or not base.shape:
        return None
    steps = [math.prod(base.shape[j + 1:]) for j in range(len(base.shape))]
    rest, starts = v.offset, []
    for st in steps:
        o, rest = divmod(rest, st)
        starts.append(o)
    out: list[tuple[int | None, int, int]] = [(None, 0, o) for o in starts]
    lead = rank - v.ndim
    for k, (n, s) in enumerate(zip(v.shape, v.strides)):
        if n == 1:
            continue   # a broadcast (or single) index: the start alone
        for j, st in enumerate(steps):
            if out[j][0] is None and s % st == 0 and 0 <= starts[j] + (s // st) * (n - 1) < base.shape[j]:
                out[j] = (lead + k, s // st, starts[j])
                break
        else:
            return None
    return tuple(out)


def _combine_parts(op: Opcode, a: str, out: str, extents: Sequence[str], parallel: bool, i: int) -> list[str]:
    """Lines that reduce ``{a}_part`` (one partial result per range of axis 0, then the
    output's axes) over its first axis into ``out``: in parallel over the output's first axis."""
    js = [f"j{k + 1}" for k in range(len(extents))]
    lines, pad = [], ""
    for depth, (j, n) in enumerate(zip(js, extents)):
        loop = "numba.prange" if depth == 0 and parallel else "range"
        lines.append(f"{pad}for {j} in {loop}({n}):" + (f"  # {i + 1}: the partial results combined" if not depth else ""))
        pad += "    "
    at = ", ".join(js)
    lines.append(f"{pad}{a}_v = {a}_part[0, {at}]")
    lines.append(f"{pad}for sp in range(1, nsp):")
    lines.append(f"{pad}    {a}_v = " + OPCODES[op].combine.format(a=f"{a}_v", b=f"{a}_part[sp, {at}]"))
    lines.append(f"{pad}{out}[{at}] = {a}_v")
    return lines


def _inner_reduction(i: int, ins: Instruction, src: str, target: str) -> tuple[str, str, str]:
    """A reduction over the innermost loop's axis: its accumulator's start (before that
    loop), its step (the body) and the store of its output element (after the loop).

    A scalar accumulator, not ``out[i0] = out[i0] + x[i0, i1]``: a store to an argument
    inside the loop makes Numba reload every operand (any argument may alias it) and keeps
    LLVM from vectorising the sum. Each output element is one run of the innermost loop
    (every other axis is an outer loop), so it is written once. A narrower output type is
    applied at every step, as NumPy's loop stores it (integer sums wrap alike)."""
    op, dtype = ins.opcode, ins.outputs[0].dtype
    a = f"acc{i + 1}"
    step = OPCODES[op].combine.format(a=a, b=src)
    if dtype != "float64":
        step = f"{_np_type(dtype)}({step})"
    return (f"{a} = {_identity(op, dtype)}", f"{a} = {step}",
            f"{target} = {a}  # {i + 1}: stored once, after its loop")


def _scan_dtype(ins: Instruction) -> np.dtype:
    """The dtype a scan accumulates in: NumPy's ``ufunc.accumulate`` of its input's dtype
    (int8 sums wrap in int8; ``logical_or`` of floats is a bool)."""
    return ins.opcode.ufunc.accumulate(np.zeros(1, dtype=ins.views_in[0].dtype)).dtype


def _scan_axis(program: Program, scans: Sequence[int], compute: Sequence[int]) -> int | None:
    """The axis of the block's scans (one loop nest has one sequential axis), or None when
    there are none; raises :class:`Unsupported` for what the WSP graph forbids."""
    if not scans:
        return None
    axes = set()
    for i in scans:
        ins = program[i]
        axis = ins.attr("axis")
        axes.add(0 if axis is None else axis % ins.outputs[0].ndim)
    if len(axes) > 1:
        raise Unsupported("scans along different axes")
    if any(program[i].opcode in OpFamily.REDUCTION for i in compute):
        raise Unsupported("a scan and a reduction in one block")
    return axes.pop()


def _scan_feeders(program: Program, scans: set[int], spans: dict[int, tuple[int, int]]) -> set[int]:
    """The block's scans and the instructions before them whose results they read, directly
    or through others (the maps producing the scanned values)."""
    last = max(scans)
    needed = set(scans)
    for i in sorted(spans, reverse=True):
        if i in needed or i > last:
            continue
        outs = program[i].outputs
        if any(o.overlaps(v) for k in needed if k > i for v in program[k].views_in for o in outs):
            needed.add(i)
    return needed


def _stored_scans(program: Program, accs: Sequence[tuple[int, str, np.dtype]], spans: dict[int, tuple[int, int]],
                  needed: set[int], memory: dict[int, str], contracted: set[str], store_of: dict[int, int]) -> bool:
    """Whether the first pass can store each chunk's local scan in the scan's output, so
    that the second pass adds the carry to it instead of recomputing the maps feeding the
    scan: every scan's output is in memory in the dtype it accumulates in (``memory``), and
    each feeding map's result is contracted and read by nothing the second pass runs, or
    stored (by the first pass then: ``store_of``, its line of the stores) and used by
    nothing else in the block."""
    scans = {i for i, _, _ in accs}
    if set(memory) != scans:
        return False
    feeders = needed - scans
    later = [j for j in spans if j not in needed]
    # pass 1 overwrites the scan's output: nothing pass 2 runs before the scan (in program
    # order) may read it (an in-place cumsum of x beside another map of the old x)
    if any(program[j].opcode not in OpFamily.SYSTEM and j < i and program[i].outputs[0].overlaps(v)
           for i in scans for j in later for v in program[j].views_in):
        return False
    def alone(i: int) -> bool:   # a stored feeder's base: no other instruction of the block uses it
        name = program[i].outputs[0].base.name
        return i in store_of and not any(
            v.base.name == name for j in spans if j != i and program[j].opcode not in OpFamily.SYSTEM
            for v in program[j].outputs + (program[j].views_in if j not in needed else ()))

    return all(alone(i) if program[i].outputs[0].base.name not in contracted else
               not any(program[i].outputs[0].overlaps(v) for j in later for v in program[j].views_in)
               for i in feeders)


def _carries(program: Program, accs: Sequence[tuple[int, str, np.dtype]]) -> list[str]:
    """The carry into each chunk: an exclusive scan of the chunk totals (serial, one step
    per chunk)."""
    out = []
    for k, a, dt in accs:
        op = program[k].opcode.combining
        out.append(f"    {a} = {_identity(op, dt.name)}  # the carries: an exclusive scan of the totals")
        out.append("    for chunk in range(nch):")
        out.append(f"        {a}_t = {a}_tot[chunk]")
        out.append(f"        {a}_tot[chunk] = {a}")
        out.append(f"        {a} = {_np_type(dt.name)}(" + OPCODES[op].combine.format(a=a, b=f"{a}_t") + ")")
    return out


def _chunked_scan(program: Program, accs: Sequence[tuple[int, str, np.dtype]], body: Sequence[str],
                  spans: dict[int, tuple[int, int]], stores: Sequence[str], n: str, parallel: bool,
                  u: Any, memory: dict[int, str], contracted: set[str], store_of: dict[int, int]) -> list[str]:
    """A one-dimensional scan block as 004's chunked scanomap, in two parallel passes over
    chunks with an exclusive scan of the chunk totals between them (serial: one per chunk).

    When the scans' outputs are stored anyway (:func:`_stored_scans`), the first pass runs
    the maps feeding the scans once and stores each chunk's local scan; the second adds the
    chunk's carry to it and runs the consumers: the maps are computed once (a sine map
    before a cumsum of 2,000,000: 59 ms per kernel recomputing it, 24-47 ms storing).
    Otherwise (the scan's output contracted) the first pass computes each chunk's total of
    the scanned values with the maps recomputed and nothing stored, then the second runs the
    whole body from each chunk's carry; the last chunk's total is never needed, so the first
    pass skips it."""
    loop = "numba.prange" if parallel else "range"
    rows = f"range(chunk * {u(_CHUNK)}, min({n}, (chunk + {u(1)}) * {u(_CHUNK)}))"
    scans = {i for i, _, _ in accs}
    needed = _scan_feeders(program, scans, spans)
    stored = _stored_scans(program, accs, spans, needed, memory, contracted, store_of)
    early = {store_of[i] for i in needed - scans if i in store_of} if stored else set()   # stores pass 1 makes
    first = [line for i in sorted(needed) for line in
             (body[spans[i][0]:spans[i][0] + 1] if i in scans else body[spans[i][0]:spans[i][1]])]
    acc_of = {i: (a, dt) for i, a, dt in accs}
    if stored:   # the local scan stored; the second pass adds the carry to it
        first += [stores[k] for k in sorted(early)]
        first += [f"{memory[i]} = {a}  # {i + 1}: the chunk's local scan" for i, a, _ in accs]
        second = []
        for i in sorted(spans):
            if i in scans:
                a, dt = acc_of[i]
                step = OPCODES[program[i].opcode.combining].combine.format(a=f"{a}_c", b=memory[i])
                second.append(f"{a} = {_np_type(dt.name)}({step})  # {i + 1}: the carry added")
                second += body[spans[i][0] + 1:spans[i][1]]
            elif i not in needed:
                second += body[spans[i][0]:spans[i][1]]
    out = [f"    nch = (({n} + {u(_CHUNK - 1)}) // {u(_CHUNK)})"]
    for k, a, dt in accs:
        out.append(f"    {a}_tot = np.full(nch, {_identity(program[k].opcode.combining, dt.name)})")
    count = "nch" if stored else f"nch - {u(1)}"
    out.append(f"    for chunk in {loop}({count}):  # pass 1: each chunk's total"
               + (" and local scan" if stored else ""))
    out += [f"        {a} = {_identity(program[k].opcode.combining, dt.name)}" for k, a, dt in accs]
    out.append(f"        for i0 in {rows}:")
    out += [f"            {line}" for line in first]
    out += [f"        {a}_tot[chunk] = {a}" for _, a, _ in accs]
    out += _carries(program, accs)
    out.append(f"    for chunk in {loop}(nch):  # pass 2: " + ("the carry added, the consumers" if stored
                                                            else "the body, from each chunk's carry"))
    out += [f"        {a}{'_c' if stored else ''} = {a}_tot[chunk]" for _, a, _ in accs]
    out.append(f"        for i0 in {rows}:")
    out += [f"            {line}" for line in (second if stored else list(body))
            + [line for k, line in enumerate(stores) if k not in early]]
    return out


def get_kernel(program: Program, block: Sequence[int], parallel: bool = True,
               access: tuple[Sequence[Any], frozenset[str]] | None = None) -> KernelSource:
    """The kernel of ``block`` (0-based instruction indices), or raise :class:`Unsupported`.

    ``access`` is ``costs.access_info(program)`` when the caller has it: it walks the whole
    program, so a caller making every block's kernel passes it once (LU at 50 x 50, 362
    blocks: 14.5 s of 104 in this call alone before).
    """
    block = sorted(block)
    acc, synced = access if access is not None else access_info(program)
    compute = [i for i in block if program[i].opcode not in OpFamily.SYSTEM]
    if not compute:
        raise Unsupported("no computing instruction")
    for i in compute:
        op = program[i].opcode
        if op in OpFamily.OPAQUE:
            raise Unsupported(f"{op.name} runs with NumPy")
        if op is Opcode.RANDOM and program[i].attr("key") is None:
            raise Unsupported("RANDOM without recorded values runs with NumPy")
    try:
        cplan = contraction_plan(program, compute)   # a contraction with its epilogue
    except (LibraryKernel, ValueError) as exc:
        raise Unsupported(str(exc)) from None
    gathered = gather_sources(program, compute)
    if cplan is not None:   # its operands are indexed by the summed letters too, not the loop alone
        gathered |= {v.base.name for v in program[cplan.index].views_in}
    for i in compute:
        for v in program[i].views_in + program[i].outputs:
            if v.dtype not in _NUMBA_DTYPES:
                raise Unsupported(f"{v.dtype} ({v.base.name}) has no Numba arithmetic: NumPy runs it")
    new = set().union(*(acc[i].new for i in block))
    freed = set().union(*(acc[i].deleted for i in block)) - synced
    plan = filter_plan(program, block, compute, new, freed)   # filters: see FilterPlan
    loop_domain = (lambda i: program[i].domain) if plan is None else plan.domain_of
    domain = loop_domain(compute[0])
    if domain is None or 0 in domain:
        raise Unsupported("an empty iteration space")
    if any(loop_domain(i) != domain for i in compute):
        raise Unsupported("instructions of different iteration shapes")
    scans = [i for i in compute if program[i].opcode in OpFamily.SCAN]
    scan_axis = _scan_axis(program, scans, compute)
    # a SYNC between two writes of its base inside the block cannot be honoured by a fused loop
    for pos, i in enumerate(block):
        if program[i].opcode is Opcode.SYNC:
            name = program[i].views_in[0].base.name
            if any(v.base.name == name for j in block[pos + 1:] for v in program[j].writes()):
                raise Unsupported(f"SYNC {name} sits between writes of {name}")
    rank = len(domain)
    # a zero-dimensional space is straight-line code: no loop, nothing to run in parallel
    # compaction: two passes over chunks in one dimension, else a serial loop (FilterPlan)
    parallel = parallel and rank > 0 and (plan is None or not plan.compacting or rank == 1)
    two_pass = parallel and plan is not None and bool(plan.compacting)
    reduced_axes = {
        program[i].attr("axis") % rank for i in compute
        if program[i].opcode in OpFamily.REDUCTION and program[i].attr("axis") is not None and rank > 1
    }
    outer = next((a for a in range(rank) if a not in reduced_axes and a != scan_axis), None)
    full_reductions = [
        i for i in compute
        if program[i].opcode in OpFamily.REDUCTION and (program[i].attr("axis") is None or rank == 1) and rank
    ]
    # sibling reductions (003 eq. 34) that leave no unreduced axis to run in parallel
    # first, or a full one beside one over axis 0: the first axis is split in ranges, each
    # with its own partial results, combined after the loop (one pass over the input). With
    # enough rows (partial results at most a quarter of the input) an axis-0 reduction
    # splits too: rows in memory order instead of a strided walk down each column (a
    # 2000 x 2000 sum and sum of squares over axis 0: 30 ms split, 63 ms by columns, here)
    split = rank >= 2 and 0 in reduced_axes and (bool(full_reductions) or outer is None or domain[0] >= 4 * _SPLIT)
    if scans and rank == 1 or split:
        outer = 0   # a one-dimensional scan: chunks in parallel, two passes

    # contraction: created and freed here, never synced, accessed only through one
    # view of the iteration space's shape
    views_of: dict[str, set[View]] = {}
    for i in compute:
        for v in program[i].reads() + program[i].writes():
            views_of.setdefault(v.base.name, set()).add(v)
    contracted = {
        name for name in new & freed
        if len(views_of.get(name, ())) == 1 and next(iter(views_of[name])).shape == domain
        and not any(program[i].opcode in OpFamily.REDUCTION and program[i].outputs[0].base.name == name for i in compute)
    } | (plan.contracted if plan is not None else set())
    # a reduction whose result the block frees is never read (a reader in the block is a
    # REDUCTION_RESULT edge, one outside would make a cycle): dead, not computed, never
    # allocated — as the cost models count it (contracted)
    contracted |= {
        program[i].outputs[0].base.name for i in compute
        if program[i].opcode in OpFamily.REDUCTION and program[i].outputs[0].base.name in new & freed
        and sum(1 for j in compute for v in program[j].reads() + program[j].writes()
                if v.base.name == program[i].outputs[0].base.name) == 1
    }

    # Arguments. A base all of whose views here are ranges of its axes is passed once, whole
    # (a C-contiguous array), and each view is indexed in the base's coordinates
    # (``G[i0 + 1, i1 + 2]``): one pointer for Numba instead of one per shifted view, and a
    # contiguous inner axis it can vectorise. Other bases pass each view (made by the caller).
    axis_outputs = {
        program[i].outputs[0].base.name for i in compute
        if program[i].opcode in OpFamily.REDUCTION and program[i].attr("axis") is not None and rank > 1
    }
    all_views: dict[str, list[View]] = {}
    for i in compute:
        for v in program[i].views_in + program[i].outputs:
            if v.base.name not in contracted and v not in all_views.setdefault(v.base.name, []):
                all_views[v.base.name].append(v)
    coords: dict[View, tuple[tuple[int | None, int, int], ...]] = {}
    for name, views in all_views.items():
        got = {v: _base_coords(v, rank) if v.ndim <= rank else None for v in views}
        # a gather's source is indexed by data, not the loop: passed as its own view
        if name not in axis_outputs and name not in gathered and all(c is not None for c in got.values()):
            coords.update(got)  # type: ignore[arg-type]
    args: list[View] = []
    arg_name: dict[View, str] = {}
    used_names: set[str] = set()
    for i in compute:
        ins = program[i]
        for v in ins.views_in + ins.outputs:
            key = v.base.view() if v in coords else v
            if v.base.name in contracted or key in arg_name:
                if v in coords:
                    arg_name[v] = arg_name[key]
                continue
            base = _safe(v.base.name)
            name, k = base, 1
            while name in used_names or name in (_safe(c) for c in contracted):
                name, k = f"{base}_{k}", k + 1
            used_names.add(name)
            arg_name[key] = name
            arg_name[v] = name
            args.append(key)
    randoms: list[int] = []   # recorded random values, passed in after the views
    extents = tuple(f"n{a}" for a in range(rank))
    idx = [f"i{a}" for a in range(rank)]
    local_of: dict[str, tuple[str, str]] = {}   # generated local -> (argument, suffix)
    # Index arithmetic is unsigned (extents come in as np.uint64, offsets are named np.uint64
    # constants): Numba checks every signed index for a negative (wrap-around) value, and
    # that check keeps LLVM from vectorising the loops.
    unsigned: set[int] = set()

    def u(k: int) -> str:
        unsigned.add(k)
        return f"u{k}"

    def term(c: tuple[int | None, int, int]) -> str:
        a, m, o = c
        if a is None:
            return str(o)
        t = idx[a] if abs(m) == 1 else f"{u(abs(m))} * {idx[a]}"
        if m < 0:   # a reversed axis: start - |step| * i, never negative
            return f"{u(o)} - {t}"
        return t if o == 0 else f"{t} + {u(o)}"

    def memory(v: View) -> str:
        name = arg_name[v]
        if v in coords:
            parts = [term(c) for c in coords[v]]
            if rows and coords[v][0][0] == 0 and len(coords[v]) >= 2:
                # a row of the base per parallel iteration: the inner loops index a
                # lower-dimensional, contiguous array
                key = (name, parts[0])
                if key not in row_of:
                    shift = re.fullmatch(rf"{idx[0]}(?: \+ u(\d+))?", parts[0])
                    row_of[key] = f"{name}_row{shift.group(1) or ''}" if shift else \
                        f"{name}_rowx{len([k for k in row_of if k[0] == name])}"
                    local_of[row_of[key]] = (name, row_of[key][len(name):])
                    opening.append(f"{row_of[key]} = {name}[{parts[0]}]")
                return f"{row_of[key]}[{', '.join(parts[1:])}]"
            return f"{name}[{', '.join(parts)}]"
        if v.ndim == 0:
            return f"{name}[0]"
        if v.ndim > rank:   # a scan's n-d input read in flat C order (axis=None)
            parts = [f"({idx[0]} // {u(math.prod(v.shape[j + 1:]))}) % {u(n)}" for j, n in enumerate(v.shape)]
            return f"{name}[{', '.join(parts)}]"
        offset = rank - v.ndim
        parts = ["0" if (n == 1 and domain[offset + j] != 1) else idx[offset + j] for j, n in enumerate(v.shape)]
        if rows and offset == 0 and parts[0] == idx[0]:
            # a row of the view, taken once per parallel iteration: the inner loops then
            # index a lower-dimensional array (faster in Numba than a[i0, i1] every time)
            key = (name, "")
            if key not in row_of:
                row_of[key] = f"{name}_row"
                local_of[f"{name}_row"] = (name, "_row")
                opening.append(f"{name}_row = {name}[{idx[0]}]")
            return f"{row_of[key]}[{', '.join(parts[1:])}]"
        return f"{name}[{', '.join(parts)}]"

    # An element written in the loop body lives in a local until the body's end, where it is
    # stored once: a store between loads would make Numba reload everything (any argument
    # may alias it) and block vectorisation. Legal blocks never touch the memory of a written
    # view through another, overlapping view (Def. 12), so the local is always current.
    written: dict[View, str] = {}   # view -> its local, once the body has written it
    stores: list[str] = []
    store_of: dict[int, int] = {}   # instruction -> its line of ``stores``
    promote: set[View] = set()      # views written twice, or read after a write
    seen_writes: set[View] = set()
    for i in compute:
        ins = program[i]
        if ins.opcode in OpFamily.REDUCTION:
            continue
        for x in ins.inputs:
            if isinstance(x, View) and x in seen_writes:
                promote.add(x)
        out = ins.outputs[0]
        if out.base.name in contracted or out.ndim == 0:
            continue
        if out in seen_writes or scans:
            # a scan kernel's first pass recomputes the scan's inputs without storing them:
            # every result is a local, stored once at the body's end of the second pass
            promote.add(out)
        seen_writes.add(out)

    def ref(v: View) -> str:
        if v.base.name in contracted:
            return _safe(v.base.name)
        return written.get(v) or memory(v)

    def operand(x: View | Literal) -> str:
        return ref(x) if isinstance(x, View) else _literal(x)

    # a one-dimensional space with a full reduction runs in chunks: a partial result per
    # chunk keeps the parallel reduction's memory small
    chunked = rank == 1 and (bool(full_reductions) or two_pass)
    rows = rank >= 2 and outer == 0 and not split
    row_of: dict[tuple[str, str], str] = {}
    lines: list[str] = []
    opening: list[str] = []   # inside the parallel loop, before the inner loops
    closing: list[str] = []   # inside the parallel loop, after them
    # the innermost loop's axis (the loop order below): a reduction over it accumulates in
    # a scalar, its output element stored once after that loop (see _inner_reduction)
    innermost = ([outer] + [a for a in range(rank) if a != outer])[-1] if rank >= 2 and not scans else None
    inner_open: list[str] = []    # before the innermost loop
    inner_close: list[str] = []   # after it
    pre: list[str] = []
    post: list[str] = []
    body: list[str] = []
    spans: dict[int, tuple[int, int]] = {}   # instruction -> its lines of ``body``
    accs: list[tuple[int, str, np.dtype]] = []   # scans: instruction, accumulator, its dtype
    opening_tile: list[str] = []   # a contraction's BLAS tile, at the top of each block of rows
    for i in block:
        spans[i] = (len(body), len(body))
        ins = program[i]
        comment = f"  # {i + 1}: {format_instruction(ins)}"
        op = ins.opcode
        if op in OpFamily.SYSTEM:
            if op is Opcode.DEL and ins.outputs[0].base.name in contracted:
                post.append(f"# {i + 1}: DEL {ins.outputs[0].base.name} (contracted: never allocated)")
            continue
        out = ins.outputs[0]
        # every operand in the dtype NumPy's loop uses (a literal typed too: 0.2 with a
        # float32 array is np.float32(0.2)); Numba then computes what NumPy does
        loop = loop_dtypes(ins)
        if loop is not None:
            ops = [_typed(operand(x), x, dt) for x, dt in zip(ins.inputs, loop)]
        elif op is Opcode.WHERE:
            branch = _weak_result(ins, ins.inputs[1:])
            ops = [operand(ins.inputs[0])] + [_typed(operand(x), x, branch) for x in ins.inputs[1:]]
        elif op in OpFamily.GATHER:
            ops = [arg_name[ins.views_in[0]]] + [operand(x) for x in ins.inputs[1:]]
        elif op in OpFamily.CONTRACTION:
            ops = []   # its operands are indexed by the summed letters too (accumulate_lines)
        else:
            ops = [operand(x) for x in ins.inputs]
        half = _half_power(ins, loop)
        if half is not None:
            expr = _half_power_expr(ops[0], half, loop[0])   # type: ignore[index]
        elif OPCODES[op].numba is not None:   # an element-wise opcode: the table's expression
            expr = OPCODES[op].scalar(ops, None if loop is None else loop[0])
        elif op is Opcode.RANGE:
            flat = " + ".join(
                f"{idx[a]}" + "".join(f" * {extents[b]}" for b in range(a + 1, rank)) for a in range(rank)
            )
            start, step = ins.attr("start", 0), ins.attr("step", 1)
            expr = f"({flat})" if (start, step) == (0, 1) else f"{start!r} + {step!r} * ({flat})"
            if ins.attr("stop") is not None:   # linspace's last element is ``stop`` exactly
                last = " * ".join(str(extents[a]) for a in range(rank)) or "1"
                expr = f"({ins.attr('stop')!r} if ({flat}) == {last} - 1 else {expr})"
        elif op in OpFamily.GATHER:
            expr = gather_expression(ins, ops[0], ops[1:], idx)
        elif op in OpFamily.CONTRACTION and cplan is not None and cplan.tile:
            a, b = (arg_name[v] for v in ins.views_in)
            opening_tile = tile_lines(a, b, extents[0], u(TILE_ROWS), comment)
            expr = f"tile[{idx[0]} - r0, {idx[1]}]"
        elif op in OpFamily.CONTRACTION and cplan is not None and cplan.batch_tile:
            opening.append(batch_tile_line(*(arg_name[v] for v in ins.views_in), idx[0], comment))
            expr = f"tile[{idx[1]}, {idx[2]}]"
        elif op in OpFamily.CONTRACTION and cplan is not None and cplan.row:
            acc = f"acc{i + 1}"
            opening += row_lines(cplan, ins, *(arg_name[v] for v in ins.views_in), idx, extents, acc)
            opening[-1] += comment
            expr = f"{acc}[{', '.join(idx[1:])}]"
        elif op in OpFamily.CONTRACTION and cplan is not None:
            acc = f"acc{i + 1}"
            body += accumulate_lines(cplan, ins, *(arg_name[v] for v in ins.views_in), idx, acc)
            body[-1] += comment
            expr = acc
        elif op is Opcode.RANDOM:
            randoms.append(ins.attr("key"))
            name = f"rnd{len(randoms) - 1}"
            offset = rank - out.ndim
            expr = f"{name}[{', '.join(idx[offset:])}]"
        elif op in OpFamily.FILTER:
            target = None if out.base.name in contracted else arg_name[out]
            chunks = (f"(({extents[0]} + {u(_CHUNK - 1)}) // {u(_CHUNK)})", u(_CHUNK), u(1)) if two_pass else None
            got = filter_lines(i, ins, ops[0], ops[1], target, comment, chunks)
            pre += got.pre
            opening += got.opening
            body += got.body
            closing += got.closing
            post += got.post
            continue
        elif op in OpFamily.SCAN:
            a = f"acc{i + 1}"
            dt = _scan_dtype(ins)
            accs.append((i, a, dt))
            src = ins.inputs[0]
            body.append(f"{a} = {_np_type(dt.name)}(" + OPCODES[op.combining].combine.format(
                a=a, b=_typed(operand(src), src, dt)) + ")" + comment)
            expr = a
        elif op in OpFamily.REDUCTION and out.base.name in contracted:
            post.append(f"# {i + 1}: {format_instruction(ins)} (freed unread: not computed, never allocated)")
            continue
        elif op in OpFamily.REDUCTION and rank == 0:
            expr = ops[0]   # the reduction of one element is that element (typed as the output below)
        elif op in OpFamily.REDUCTION:
            (src,) = ops
            if ins.attr("axis") is None or rank == 1:
                a = f"acc{i + 1}"
                guard = ""
                if plan is not None and (i in plan.guarded or any(r == i for r, _ in plan.fused)):
                    flat = " + ".join(f"{idx[k]}" + "".join(f" * {extents[b]}" for b in range(k + 1, rank))
                                      for k in range(rank))
                    src, guard = fold_source(plan, i, arg_name.get(ins.views_in[0]), f"({flat})")
                slot = "chunk" if chunked else "sp" if split else idx[0]
                size = f"(({extents[0]} + {u(_CHUNK - 1)}) // {u(_CHUNK)})" if chunked else \
                    "nsp" if split else extents[0]
                pre.append(f"{a}_part = np.empty({size}, dtype={_np_type(out.dtype)})")
                # a scalar accumulator per outer iteration (or chunk) stays in a register
                opening.append(f"{a} = {_identity(op, out.dtype)}")
                body.append(f"{guard}{a} = " + OPCODES[op].combine.format(a=a, b=src) + comment)
                closing.append(f"{a}_part[{slot}] = {a}")
                post.append(f"{ref(out)} = {a}_part.{OPCODES[op].partials}()"
                            f"  # {i + 1}: the partial results combined")
            elif split and ins.attr("axis") % rank == 0:
                a = f"acc{i + 1}"
                keep = [idx[k] for k in range(1, rank)]
                pre.append(f"{a}_part = np.empty((nsp, {', '.join(extents[1:])}), dtype={_np_type(out.dtype)})")
                opening.append(f"{a}_part[sp].fill({_identity(op, out.dtype)})")
                target = f"{a}_part[sp, {', '.join(keep)}]"
                body.append(f"{target} = " + OPCODES[op].combine.format(a=target, b=src) + comment)
                post += _combine_parts(op, a, arg_name[out], extents[1:], parallel, i)
            elif ins.attr("axis") % rank == innermost:
                got = _inner_reduction(i, ins, src, f"{arg_name[out]}[{', '.join(idx[:innermost] + idx[innermost + 1:])}]")
                inner_open.append(got[0])
                body.append(got[1] + comment)
                inner_close.append(got[2])
            else:
                axis = ins.attr("axis") % rank
                keep = [idx[a] for a in range(rank) if a != axis]
                target = f"{arg_name[out]}[{', '.join(keep)}]"
                pre.append(f"{arg_name[out]}.fill({_identity(op, out.dtype)})  # {i + 1}: start the reduction")
                body.append(f"{target} = " + OPCODES[op].combine.format(a=target, b=src) + comment)
            continue
        else:  # pragma: no cover - families are exhausted above
            raise Unsupported(f"{op.name} has no kernel form")
        if (out.dtype != "float64" or any(isinstance(x, View) and x.dtype != "float64" for x in ins.inputs)) \
                and op not in OpFamily.GATHER or op is Opcode.RANGE or loop is not None and loop[-1].name != "float64" \
                or not any(isinstance(x, View) for x in ins.inputs) and op is Opcode.COPY:
            # typed as the output (a prange index is unsigned: -i0 must not wrap)
            expr = f"{_np_type(out.dtype)}({expr})"
        if out.base.name in contracted or out.ndim == 0 or out not in promote:
            body.append(f"{ref(out)} = {expr}{comment}")
            spans[i] = (spans[i][0], len(body))
            continue
        if out not in written:
            name = arg_name[out]
            k = sum(1 for w in written if arg_name[w] == name)
            local = f"{name}_w{k or ''}"
            local_of[local] = (name, local[len(name):])
            store_of[i] = len(stores)
            stores.append(f"{memory(out)} = {local}  # {format_view(out)} stored once")
            written[out] = local
        body.append(f"{written[out]} = {expr}{comment}")
        spans[i] = (spans[i][0], len(body))

    body = body or ["pass"]   # every instruction dead
    params = [arg_name[v] for v in args] + [f"rnd{k}" for k in range(len(randoms))] + list(extents)
    # reassociation lets the accumulations vectorise; results differ from NumPy's pairwise
    # sums in the last bits (the tests compare with a tolerance)
    fast = ", fastmath={'reassoc'}" if (full_reductions or reduced_axes or cplan is not None) and not scans else ""
    # NumPy's error model: division by zero gives inf, nan or 0 (integers), never raises
    lines.append(f"@numba.njit(parallel={parallel}{fast}, error_model='numpy', cache=True)")
    lines.append(f"def kernel({', '.join(params)}):")
    for v in args:
        views = [format_view(w) for w in all_views.get(v.base.name, ()) if w in coords]
        if views and v == v.base.view() and views != [format_view(v)]:
            lines.append(f"    # {arg_name[v]} = {v.base.name} (whole; indexed for {', '.join(views)})")
        else:
            lines.append(f"    # {arg_name[v]} = {format_view(v)}")
    constants_at = len(lines)   # the unsigned constants go here, once all are known
    lines += [f"    {p}" for p in pre]
    indent = "    "
    order = [outer] + [a for a in range(rank) if a != outer] if rank else []
    if split:   # ranges of the first axis in parallel, each with its partial results
        lines.insert(constants_at, f"    nsp = min({extents[0]}, {u(_SPLIT)})  # ranges of axis 0")
        lines.append(f"{indent}for sp in {'numba.prange' if parallel else 'range'}(nsp):")
        lines += [f"{indent}    {x}" for x in opening]
        lines.append(f"{indent}    for {idx[0]} in range(sp * {extents[0]} // nsp, (sp + {u(1)}) * {extents[0]} // nsp):")
        indent += "        "
        order = order[1:]
    if chunked:  # one partial result per chunk, not per element
        lines.append(f"{indent}for chunk in {'numba.prange' if parallel else 'range'}"
                     f"(({extents[0]} + {u(_CHUNK - 1)}) // {u(_CHUNK)}):")
        lines += [f"{indent}    {x}" for x in opening]
        lines.append(f"{indent}    for {idx[0]} in range(chunk * {u(_CHUNK)}, min({extents[0]}, (chunk + {u(1)}) * {u(_CHUNK)})):")
        indent += "        "
        order = []
    if scans and rank == 1:
        scan_memory = {i: memory(program[i].outputs[0]) for i, _, dt in accs
                       if program[i].outputs[0].base.name not in contracted and program[i].outputs[0].dtype == dt.name}
        lines += _chunked_scan(program, accs, body, spans, stores, extents[0], parallel, u, scan_memory, contracted,
                               store_of)
        order = []
    elif scans:   # the scan axis innermost, its accumulators restarted for each line
        order = [a for a in order if a != scan_axis] + [scan_axis]
    tiled = cplan is not None and cplan.tile
    if tiled:   # blocks of rows in parallel, each its rows of the product (BLAS) then the rest
        lines.append(f"{indent}for rb in {'numba.prange' if parallel else 'range'}"
                     f"(({extents[0]} + {u(TILE_ROWS - 1)}) // {u(TILE_ROWS)}):")
        indent += "    "
        lines += [f"{indent}{x}" for x in opening_tile]
    for depth, a in enumerate(order):
        loop = "numba.prange" if depth == 0 and parallel and not split and not tiled else "range"
        if scans and depth == len(order) - 1:
            lines += [f"{indent}{acc} = {_identity(program[k].opcode.combining, dt.name)}" for k, acc, dt in accs]
        if depth == len(order) - 1:
            lines += [f"{indent}{x}" for x in inner_open]
        bounds = "r0, r1" if tiled and depth == 0 else extents[a]
        lines.append(f"{indent}for {idx[a]} in {loop}({bounds}):")
        indent += "    "
        if depth == 0 and not split:
            lines += [f"{indent}{x}" for x in opening]
    if not (scans and rank == 1):
        lines += [f"{indent}{b}" for b in body]
        lines += [f"{indent}{x}" for x in stores]
        lines += [f"{indent[:-4]}{x}" for x in inner_close]
    lines += [f"        {x}" for x in closing]
    lines += [f"    {p}" for p in post]
    if unsigned:
        ks = sorted(unsigned)
        lines.insert(constants_at, f"    {', '.join(f'u{k}' for k in ks)} = "
                     f"{', '.join(f'np.uint64({k})' for k in ks)}"
                     "  # unsigned offsets: no negative-index checks")
    source = "\n".join(lines)
    # The kernel depends on the code, not on sizes, offsets or names: blocks whose code is
    # the same up to renaming share one compiled kernel (arguments are positional).
    rename = {arg_name[v]: f"a{k}" for k, v in enumerate(args)}
    rename.update({_safe(name): f"c{k}" for k, name in enumerate(sorted(contracted))})
    rename.update({local: rename[name] + suffix for local, (name, suffix) in local_of.items()})
    pattern = re.compile(r"(?<![.\w])(" + "|".join(map(re.escape, sorted(rename, key=len, reverse=True))) + r")\b") \
        if rename else None
    code = [line.split("#", 1)[0].rstrip() for line in lines]
    canonical = "\n".join(pattern.sub(lambda m: rename[m.group(1)], c) if pattern else c for c in code if c.strip())
    dtypes = ",".join(f"{v.dtype}:{v.ndim}" for v in args)
    signature = f"{canonical}\n#args={dtypes}"
    iterations = 0
    if parallel:
        iterations = -(-domain[0] // _CHUNK) if chunked or scans and rank == 1 else \
            min(domain[0], _SPLIT) if split else -(-domain[0] // TILE_ROWS) if tiled else domain[outer]
    return KernelSource(source, tuple(args), tuple(domain), tuple(sorted(contracted)), tuple(block), signature,
                        tuple(randoms), iterations, library_blas=tiled or cplan is not None and cplan.batch_tile)


# --------------------------------------------------------------------------- gathers
# A GATHER is one element of its output per iteration, like a map, read from its source at
# the positions its index arrays hold: the source is an argument of its own (never indexed
# in the loop's coordinates, never contracted), complete before the kernel starts (the WSP
# graph's GATHER_SOURCE edges keep its writers out). Indices are valid: capture indexed
# with NumPy first, which raised IndexError for any other (docs/semantics.md, "Gathers").


def gather_sources(program: Program, compute: Sequence[int]) -> frozenset[str]:
    """The bases the block's gathers read from; :class:`Unsupported` when the block also
    writes a gathered view (an illegal block: see ``Conflict.GATHER_SOURCE``)."""
    sources = [program[i].views_in[0] for i in compute if program[i].opcode in OpFamily.GATHER]
    for i in compute:
        for v in program[i].writes():
            if any(v.overlaps(s) for s in sources):
                raise Unsupported(f"{v.base.name} is gathered from and written in one block")
    return frozenset(s.base.name for s in sources)


def gather_expression(ins: Instruction, src: str, indices: Sequence[str], loop_index: Sequence[str]) -> str:
    """The element ``src[...]`` of GATHER ``ins``: each index wrapped when negative (as
    NumPy does; an unsigned one never is), the source's untouched last axes indexed by the
    output's last loop indices.

    >>> from fusionlab import parse
    >>> p = parse("ARRAY M float64[3,4]\\nARRAY J int32[2]\\nARRAY Y float64[2,4]\\nGATHER Y, M, J[:, None]")
    >>> gather_expression(p[0], "M", ["J[i0]"], ["i0", "i1"])
    'M[(J[i0] + M.shape[0] if J[i0] < 0 else J[i0]), i1]'
    """
    source, *index_views = ins.views_in
    parts = [e if np.dtype(x.dtype).kind == "u" else f"({e} + {src}.shape[{k}] if {e} < 0 else {e})"
             for k, (x, e) in enumerate(zip(index_views, indices))]
    rank, rest = len(loop_index), source.ndim - len(index_views)
    parts += [loop_index[rank - rest + j] for j in range(rest)]
    return f"{src}[{', '.join(parts)}]"


# --------------------------------------------------------------------------- filters (issue 14; 002)
# A block with a COMPRESS or a filter-fold loops over the filter's input domain
# (``filters.loop_domains``). A filter sharing the block keeps each element and its mask
# bit in locals; a filter-fold in the block folds the element under the mask bit (its
# output contracted when nothing else uses it); a filter whose output is used elsewhere
# writes it compacted at a running count, which makes the kernel serial. A filter-fold
# whose filter ran in an earlier block reads the compacted output under ``flat < count``.


@dataclass(frozen=True)
class FilterPlan:
    """How the filters of a block run in its loop (see the comment above)."""

    domains: tuple[tuple[int, ...] | None, ...]
    #: filter-fold -> its COMPRESS, for the COMPRESS instructions in the block
    fused: tuple[tuple[int, int], ...]
    #: filter-folds whose COMPRESS ran in an earlier block
    guarded: tuple[int, ...]
    #: filter outputs that are never allocated (created, only folded and freed here)
    contracted: frozenset[str]
    #: COMPRESS instructions whose output the kernel writes (compaction: a serial loop)
    compacting: tuple[int, ...]

    def domain_of(self, i: int) -> tuple[int, ...] | None:
        """The loop domain of instruction ``i``."""
        return self.domains[i]


def filter_plan(program: Program, block: Sequence[int], compute: Sequence[int],
                new: set[str], freed: set[str]) -> FilterPlan | None:
    """The block's :class:`FilterPlan`; ``None`` when it has no filter and no filter-fold."""
    folds = filter_folds(program)
    filters = [i for i in compute if program[i].opcode in OpFamily.FILTER]
    if not filters and not any(i in folds for i in compute):
        return None
    members = set(compute)
    fused = tuple((r, c) for r, c in sorted(folds.items()) if r in members and c in members)
    guarded = tuple(r for r in compute if r in folds and folds[r] not in members)
    contracted, compacting = set(), []
    for c in filters:
        name = program[c].outputs[0].base.name
        users = [j for j in compute if j != c and any(v.base.name == name for v in program[j].reads()
                                                      + program[j].writes())]
        only_folded = all(folds.get(j) == c for j in users)
        if not only_folded:   # the WSP graph forbids this (Conflict.FILTER_OUTPUT)
            raise Unsupported(f"{program[c].opcode.name} {name} is used in its own loop by another instruction "
                              "than a reduction of all of it")
        if name in new and name in freed:
            contracted.add(name)
        else:
            compacting.append(c)
    return FilterPlan(tuple(loop_domains(program)), fused, guarded, frozenset(contracted), tuple(compacting))


def _filter_locals(c: int) -> tuple[str, str, str]:
    """The locals of COMPRESS ``c``: its element, its mask bit, its running count (``acc``
    names: no array is called that, ``_safe`` renames such arrays)."""
    return f"acc{c + 1}_val", f"acc{c + 1}_keep", f"acc{c + 1}_count"


@dataclass(frozen=True)
class FilterLines:
    """A COMPRESS's lines: before the loop, per chunk (opening, closing), in the body, after."""

    pre: list[str]
    opening: list[str]
    body: list[str]
    closing: list[str]
    post: list[str]


def filter_lines(c: int, ins: Instruction, data: str, mask: str, target: str | None, comment: str,
                 chunks: tuple[str, str, str] | None = None) -> FilterLines:
    """The lines of COMPRESS ``c``: the element and mask bit as locals and, when its output
    is written (``target``: the output's argument), the compaction. Serial: a running count.
    With ``chunks`` (the chunk count, the chunk size and 1, unsigned; a parallel loop over
    chunks), two passes: each chunk compacts into its own slice of a buffer and counts, then
    the exclusive prefix sums of the counts place each chunk's run in the output."""
    val, keep, count = _filter_locals(c)
    out = ins.outputs[0]
    expr = data if ins.views_in[0].dtype == out.dtype else f"{_np_type(out.dtype)}({data})"
    body = [f"{val} = {expr}{comment}", f"{keep} = {mask}"]
    if target is None:
        return FilterLines([], [], body, [], [])
    if chunks is None:
        body.append(f"if {keep}: {target}[{count}] = {val}; {count} += 1  # compacted, in C order")
        return FilterLines([f"{count} = 0"], [], body, [], [])
    n, size, one = chunks
    buf, counts, at, k, j = (f"acc{c + 1}_{x}" for x in ("buf", "counts", "at", "chunk", "j"))
    body.append(f"if {keep}: {buf}[chunk * {size} + {count}] = {val}; {count} += {one}  # this chunk's run")
    pre = [f"{buf} = np.empty({n} * {size}, dtype={_np_type(out.dtype)})",
           f"{counts} = np.empty({n}, dtype=np.uint64)"]
    post = [f"{at} = np.empty({n}, dtype=np.uint64)  # {c + 1}: where each chunk's run starts in {out.base.name}",
            f"{count} = np.uint64(0)",
            f"for {k} in range({n}):",
            f"    {at}[{k}] = {count}",
            f"    {count} += {counts}[{k}]",
            f"for {k} in numba.prange({n}):",
            f"    for {j} in range({counts}[{k}]):",
            f"        {target}[{at}[{k}] + {j}] = {buf}[{k} * {size} + {j}]"]
    return FilterLines(pre, [f"{count} = np.uint64(0)"], body, [f"{counts}[chunk] = {count}"], post)


def fold_source(plan: FilterPlan, r: int, src_arg: str | None, flat: str) -> tuple[str, str]:
    """A filter-fold's element and its guard: the filter's element under its mask bit when
    the filter shares the block, else the compacted output at the flat loop index, below
    its length."""
    for rr, c in plan.fused:
        if rr == r:
            val, keep, _ = _filter_locals(c)
            return val, f"if {keep}: "
    return f"{src_arg}[{flat}]", f"if {flat} < np.uint64({src_arg}.shape[0]): "
