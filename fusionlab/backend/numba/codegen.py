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
- a histogram (BINCOUNT) runs in chunks too, each counting into its own row of bins (one
  row when serial) and flagging a value outside them; after the loop a flag raises
  ValueError, else the rows are summed into the output;
- a scan (004's scanomap) runs along its axis with the maps producing its input before it
  and element-wise consumers of its output after it: one-dimensional, in chunks, in two
  parallel passes (chunk totals, or local scans stored in a stored output; then the body,
  or the carry and the consumers, from each chunk's carry); n-dimensional,
  parallel over another axis with the scan axis innermost.

:func:`get_kernel` returns the source as data (a :class:`KernelSource`), or the reason the
block cannot be compiled; :mod:`fusionlab.backend.numba.plan` compiles and runs it. It
analyses the block first (:func:`fusionlab.backend.numba.layout.get_kernel_layout`, a frozen
:class:`~fusionlab.backend.numba.layout.KernelLayout`) and writes the source from that layout
alone (:func:`emit_kernel`); the kernel's signature, the cache's key, is the source written
from the layout with names that depend on positions only (:func:`kernel_signature`).

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

from fusionlab.ir.bytecode import OPCODES, Instruction, Literal, Opcode, OpFamily, Program, View
from fusionlab.backend.numba.contract import (
    TILE_ROWS, accumulate_lines, batch_tile_line, row_lines, tile_lines,
)
from fusionlab.backend.numba.emit import (
    arg_partials_lines, arg_split_lines, arg_step, compaction_chunks, filter_lines, float_to_int,
    fold_element, fold_select, fold_source, is_fold, gather_lines, histogram_lines, ChunkLoop,
    loop_dtypes, np_type, weak_result, constant_text, typed_operand,
)
from fusionlab.backend.numba.lanes import (
    SplitUpdate, buffered_chunk, combine_split_parts, laned_extreme, laned_lines, row_laned,
    row_laned_lines, unrolled_chunk,
)
from fusionlab.backend.numba.layout import (
    CHUNK, SPLIT, FilterPlan, KernelLayout, KernelNames, Reduction, ReductionForm, Unsupported,
    canonical_names, display_names, filter_plan, gather_sources, get_kernel_layout, safe_name,
    split_ranges_source,
)
from fusionlab.backend.numba.vmath import math_helpers_in, scalar_expression
from fusionlab.backend.numba.strip import (
    STRIP, EmittedScan, StripParts, carry_lines, chunk_strip_lines, identity_text, kernel_helpers,
    split_for_strips, strip_lines, vector_call,
)
from fusionlab.ir.text import format_instruction, format_view

__all__ = ["KernelSource", "Unsupported", "constant_text", "get_kernel", "emit_kernel", "kernel_signature", "get_kernel_layout",
           "KernelLayout", "KernelNames", "loop_dtypes", "FilterPlan", "filter_plan", "gather_sources",
           "gather_lines", "filter_lines", "fold_source"]

_CHUNK = CHUNK
#: the kernel's name for an array (the compiled driver names its variables alike)
_safe = safe_name
_np_type = np_type
_weak_result = weak_result


#: a reduction's starting value, typed as its output (``np.float32(-np.inf)``)
_identity = identity_text


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
    #: to one thread while the run lasts (:func:`fusionlab.backend.numba.contract.serial_library_blas`)
    library_blas: bool = False
    #: the views' offsets the kernel takes after its extents (``o0, o1, ...``): arguments, not
    #: constants, so the blocks of a rerolled loop's columns share one compiled kernel
    offsets: tuple[int, ...] = ()
    #: the float and complex literals the kernel takes after its offsets (``c0, c1, ...``):
    #: arguments, so the batches of a time loop (``np.sin(x - t)``, t a new float each step)
    #: or of an optimiser's evaluations share one compiled kernel
    constants: tuple[float | complex, ...] = ()

    @cached_property
    def extent_arguments(self) -> tuple[np.uint64, ...]:
        """The extents, then the offsets, as the kernel takes them: unsigned, as its index
        arithmetic."""
        return tuple(np.uint64(n) for n in self.extents + self.offsets)

    @property
    def scalar_arguments(self) -> tuple[np.uint64 | float | complex, ...]:
        """Every argument after the arrays and the draws: the extents, the offsets, then the
        literals (:attr:`constants`)."""
        return self.extent_arguments + self.constants

    @cached_property
    def key(self) -> str:
        """A short hash of the canonical signature (the kernel cache's key)."""
        return hashlib.sha1(self.signature.encode()).hexdigest()[:16]


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


def get_kernel(program: Program, block: Sequence[int], parallel: bool = True,
               access: tuple[Sequence[Any], frozenset[str]] | None = None) -> KernelSource:
    """The kernel of ``block`` (0-based instruction indices), or raise :class:`Unsupported`.

    The block's :func:`~fusionlab.backend.numba.layout.get_kernel_layout` (the analysis), its
    source written from that layout with the program's names (:func:`emit_kernel`), and its
    signature (:func:`kernel_signature`). ``access`` is ``costs.access_info(program)`` when
    the caller has it: it walks the whole program, so a caller making every block's kernel
    passes it once (LU at 50 x 50, 362 blocks: 14.5 s of 104 in this call alone before).
    """
    layout = get_kernel_layout(program, block, parallel, access)
    emitter = _Emitter(layout, display_names(layout))
    return KernelSource(emitter.source(), layout.arguments, layout.domain,
                        layout.contracted, layout.block, kernel_signature(layout), layout.randoms,
                        layout.parallel_iterations, library_blas=layout.library_blas,
                        offsets=tuple(emitter.offsets.values()), constants=tuple(emitter.constants))


def kernel_signature(layout: KernelLayout) -> str:
    """The kernel's code up to names, sizes and comments, and its arguments' dtypes and
    ranks: the source written from ``layout`` with :func:`canonical_names`, comments and
    blank lines dropped. Blocks with one signature share one compiled kernel (arguments are
    positional; sizes are arguments too).

    >>> from fusionlab import parse
    >>> p = parse("ARRAY A float64[4]\\nARRAY B float64[4]\\nADD B, A, 1\\nADD A, B, 1")
    >>> kernel_signature(get_kernel_layout(p, [0])) == kernel_signature(get_kernel_layout(p, [1]))
    True
    >>> print(kernel_signature(get_kernel_layout(p, [0])))
    @numba.njit(parallel=True, error_model='numpy', cache=True)
    def kernel(a0, a1, n0):
        for i0 in numba.prange(n0):
            a1[i0] = a0[i0] + np.float64(1)
    #args=float64:1,float64:1
    """
    code = [line.split("#", 1)[0].rstrip() for line in emit_kernel(layout, canonical_names(layout)).split("\n")]
    dtypes = ",".join(f"{v.dtype}:{v.ndim}" for v in layout.arguments)
    return "\n".join(c for c in code if c.strip()) + f"\n#args={dtypes}"


def emit_kernel(layout: KernelLayout, names: KernelNames) -> str:
    """The Numba source of the kernel ``layout`` describes, its arguments and contracted
    arrays named ``names`` (:func:`~fusionlab.backend.numba.layout.display_names` for the
    program's own, :func:`~fusionlab.backend.numba.layout.canonical_names` for the signature).

    >>> from fusionlab import parse
    >>> from fusionlab.backend.numba.layout import canonical_names
    >>> p = parse("ARRAY A float64[4]\\nNEGATIVE A, A")
    >>> lay = get_kernel_layout(p, [0])
    >>> print(emit_kernel(lay, canonical_names(lay)))
    @numba.njit(parallel=True, error_model='numpy', cache=True)
    def kernel(a0, n0):
        # a0 = A
        for i0 in numba.prange(n0):
            a0[i0] = -a0[i0]  # 1: NEGATIVE A, A
    """
    return _Emitter(layout, names).source()


class _Emitter:
    """One kernel's source being written from its layout: the lines before the loops
    (``pre``), at the top and bottom of each parallel iteration (``opening``, ``closing``),
    around the innermost loop (``inner_open``, ``inner_close``), the loop body (``body``,
    with each instruction's ``spans``), the stores at the body's end (``stores``) and the
    lines after the loops (``post``)."""

    def __init__(self, layout: KernelLayout, names: KernelNames) -> None:
        self.lay, self.names = layout, names
        self.local = dict(zip(layout.contracted, names.contracted))
        self.extents = tuple(f"n{a}" for a in range(layout.rank))
        self.idx = [f"i{a}" for a in range(layout.rank)]
        # Index arithmetic is unsigned (extents come in as np.uint64, offsets are named
        # np.uint64 constants): Numba checks every signed index for a negative
        # (wrap-around) value, and that check keeps LLVM from vectorising the loops.
        self.unsigned: set[int] = set()
        #: (argument, axis, value) -> the offset's parameter number: views' offsets are
        #: arguments (``o0, o1, ...``); one per argument's axis and value, so blocks that
        #: differ only in where their views start share a kernel
        self.offset_of: dict[tuple[str, int, int], int] = {}
        self.offsets: dict[int, int] = {}
        #: the float and complex literals, in the order the body names them (``c0, c1, ...``)
        self.constants: list[float | complex] = []
        self.row_of: dict[tuple[str, str], str] = {}
        self.written: dict[View, str] = {}   # view -> its local, once the body has written it
        self.store_of: dict[int, int] = {}   # instruction -> its line of ``stores``
        self.spans: dict[int, tuple[int, int]] = {}
        self.accs: list[tuple[int, str, np.dtype]] = []   # scans: instruction, accumulator, its dtype
        self.scan_value: dict[int, str] = {}   # scan -> the value it combines (its operand, typed)
        self.vector_calls: dict[int, tuple[str, str, str] | None] = {}   # strip.vector_call
        self.randoms = 0
        self.pre: list[str] = []
        self.opening: list[str] = []
        self.closing: list[str] = []
        self.inner_open: list[str] = []
        self.inner_close: list[str] = []
        self.body: list[str] = []
        self.stores: list[str] = []
        self.post: list[str] = []
        self.opening_tile: list[str] = []   # a contraction's BLAS tile, at the top of each block of rows
        self.laned: list[tuple[int, Opcode, str]] = []   # extreme reductions in LANES lanes (and their dtype)
        self.split_updates: list[SplitUpdate] = []   # reductions over axis 0 in a split kernel (row lanes)
        self.inner_accs: list[str] = []   # accumulators of the reductions over the innermost axis

    # ------------------------------------------------------------------ operands
    def u(self, k: int) -> str:
        self.unsigned.add(k)
        return f"u{k}"

    def off(self, name: str, axis: int, value: int) -> str:
        """The parameter holding offset ``value`` of ``name``'s ``axis``."""
        k = self.offset_of.setdefault((name, axis, value), len(self.offset_of))
        self.offsets[k] = value
        return f"o{k}"

    def term(self, c: tuple[int | None, int, int], name: str = "", axis: int = 0) -> str:
        a, m, o = c
        if a is None:
            return self.off(name, axis, o) if name else str(o)
        t = self.idx[a] if abs(m) == 1 else f"{self.u(abs(m))} * {self.idx[a]}"
        if m < 0:   # a reversed axis: start - |step| * i, never negative
            return f"{self.off(name, axis, o) if name else self.u(o)} - {t}"
        return t if o == 0 else f"{t} + {self.off(name, axis, o) if name else self.u(o)}"

    def arg(self, v: View) -> str:
        """The name of the argument ``v`` is (or is indexed in)."""
        return self.names.arguments[self.lay.slot[v][0]]

    def row(self, name: str, key: str, local: str, index: str) -> str:
        """A row of argument ``name`` taken once per parallel iteration: the inner loops then
        index a lower-dimensional, contiguous array (faster in Numba than ``a[i0, i1]``)."""
        if (name, key) not in self.row_of:
            self.row_of[(name, key)] = local
            self.opening.append(f"{local} = {name}[{index}]")
        return self.row_of[(name, key)]

    def memory(self, v: View) -> str:
        """The element of ``v`` at the loop indices, in memory."""
        name, coords = self.arg(v), self.lay.slot[v][1]
        idx, rank = self.idx, self.lay.rank
        if coords is not None:
            parts = [self.term(c, name, j) for j, c in enumerate(coords)]
            if self.lay.rows and coords[0][0] == 0 and len(coords) >= 2:
                shift = re.fullmatch(rf"{idx[0]}(?: \+ o(\d+))?", parts[0])
                local = f"{name}_row{shift.group(1) or ''}" if shift else \
                    f"{name}_rowx{len([k for k in self.row_of if k[0] == name])}"
                return f"{self.row(name, parts[0], local, parts[0])}[{', '.join(parts[1:])}]"
            return f"{name}[{', '.join(parts)}]"
        if v.ndim == 0:
            return f"{name}[0]"
        if self.lay.filters is not None and v in self.lay.filters.row_masks:   # indexed by the leading axes
            return f"{name}[{', '.join(idx[:v.ndim])}]"
        if v.ndim > rank:   # a scan's n-d input read in flat C order (axis=None)
            parts = [f"({idx[0]} // {self.u(math.prod(v.shape[j + 1:]))}) % {self.u(n)}" for j, n in enumerate(v.shape)]
            return f"{name}[{', '.join(parts)}]"
        offset = rank - v.ndim
        parts = ["0" if (n == 1 and self.lay.domain[offset + j] != 1) else idx[offset + j]
                 for j, n in enumerate(v.shape)]
        if self.lay.rows and offset == 0 and parts[0] == idx[0]:
            return f"{self.row(name, '', f'{name}_row', idx[0])}[{', '.join(parts[1:])}]"
        return f"{name}[{', '.join(parts)}]"

    def ref(self, v: View) -> str:
        if v.base.name in self.local:
            return self.local[v.base.name]
        return self.written.get(v) or self.memory(v)

    def operand(self, x: View | Literal) -> str:
        if isinstance(x, View):
            return self.ref(x)
        if type(x.value) in (float, complex):   # an argument: see KernelSource.constants
            self.constants.append(x.value)
            return f"c{len(self.constants) - 1}"
        return constant_text(x.value)

    def operands(self, ins: Instruction, loop: tuple[np.dtype, ...] | None) -> list[str]:
        """Every operand in the dtype NumPy's loop uses (a literal typed too: 0.2 with a
        float32 array is np.float32(0.2)); Numba then computes what NumPy does."""
        if loop is not None:
            return [typed_operand(self.operand(x), x, dt) for x, dt in zip(ins.inputs, loop)]
        if ins.opcode is Opcode.WHERE:
            branch = _weak_result(ins, ins.inputs[1:])
            return [self.operand(ins.inputs[0])] + [typed_operand(self.operand(x), x, branch) for x in ins.inputs[1:]]
        if ins.opcode in OpFamily.GATHER:
            return [self.arg(ins.views_in[0])] + [self.operand(x) for x in ins.inputs[1:]]
        if ins.opcode in OpFamily.CONTRACTION:
            return []   # its operands are indexed by the summed letters too (accumulate_lines)
        return [self.operand(x) for x in ins.inputs]

    # ------------------------------------------------------------------ the body
    def emit_body(self) -> None:
        """Each instruction's lines, in program order."""
        forms = {r.index: r for r in self.lay.reductions}
        for i, ins in zip(self.lay.block, self.lay.instructions):
            self.spans[i] = (len(self.body), len(self.body))
            comment = f"  # {i + 1}: {format_instruction(ins)}"
            op = ins.opcode
            if op in OpFamily.SYSTEM:
                if op is Opcode.DEL and ins.outputs[0].base.name in self.local:
                    self.post.append(f"# {i + 1}: DEL {ins.outputs[0].base.name} (contracted: never allocated)")
                continue
            loop = loop_dtypes(ins)
            # a filter-fold's element: from its filter or under a guard (fold_element), never unguarded
            ops = [""] if is_fold(self.lay.filters, i) else self.operands(ins, loop)
            if op in OpFamily.FILTER:
                self.filter(i, ins, ops, comment)
            elif op in OpFamily.HISTOGRAM:
                self.histogram(i, ins, ops, comment)
            elif i in forms and forms[i].form is not ReductionForm.ELEMENT:
                self.reduction(forms[i], ins, ops, comment)
            else:
                expr = self.expression(i, ins, ops, loop, comment)
                self.vector_calls[i] = vector_call(op, ops, loop, expr)
                self.store(i, ins, expr, loop, comment)

    def expression(self, i: int, ins: Instruction, ops: list[str], loop: tuple[np.dtype, ...] | None,
                   comment: str) -> str:
        """The value instruction ``i`` stores at the loop indices (lines it needs first added)."""
        op, idx, extents, rank = ins.opcode, self.idx, self.extents, self.lay.rank
        if op is Opcode.RANGE:
            flat = " + ".join(
                f"{idx[a]}" + "".join(f" * {extents[b]}" for b in range(a + 1, rank)) for a in range(rank)
            )
            start, step = ins.attr("start", 0), ins.attr("step", 1)
            expr = f"({flat})" if (start, step) == (0, 1) else f"{start!r} + {step!r} * ({flat})"
            if ins.attr("stop") is not None:   # linspace's last element is ``stop`` exactly
                last = " * ".join(str(extents[a]) for a in range(rank)) or "1"
                expr = f"({ins.attr('stop')!r} if ({flat}) == {last} - 1 else {expr})"
            return expr
        if op in OpFamily.GATHER:
            got = gather_lines(i, ins, ops[0], ops[1:], idx)
            self.pre += got.pre
            self.body += got.body
            self.post += got.post
            return got.expr
        if op in OpFamily.CONTRACTION and self.lay.contraction is not None:
            return self.contraction(i, ins, comment)
        if op is Opcode.RANDOM:
            self.randoms += 1
            return f"rnd{self.randoms - 1}[{', '.join(idx[rank - ins.outputs[0].ndim:])}]"
        if op in OpFamily.SCAN:
            a = f"acc{i + 1}"
            dt = np.dtype(next(s.dtype for s in self.lay.scans if s.index == i))
            self.accs.append((i, a, dt))
            src = ins.inputs[0]
            self.scan_value[i] = typed_operand(self.operand(src), src, dt)
            self.body.append(f"{a} = {_np_type(dt.name)}(" + OPCODES[op.combining].combine.format(
                a=a, b=typed_operand(self.operand(src), src, dt)) + ")" + comment)
            return a
        if op in OpFamily.ARG_REDUCTION:
            return "0"   # the one element's index
        if op in OpFamily.REDUCTION:
            return ops[0]   # the reduction of one element is that element (typed as the output below)
        return scalar_expression(ins, ops, loop)

    def contraction(self, i: int, ins: Instruction, comment: str) -> str:
        """A CONTRACT's element: from a BLAS tile, a batch element's product, a row of
        accumulators, or a scalar accumulated over the summed letters."""
        cplan, idx, extents = self.lay.contraction, self.idx, self.extents
        assert cplan is not None
        a, b = (self.arg(v) for v in ins.views_in)
        if cplan.tile:
            self.opening_tile = tile_lines(a, b, extents[0], self.u(TILE_ROWS), comment)
            return f"tile[{idx[0]} - r0, {idx[1]}]"
        if cplan.batch_tile:
            self.opening.append(batch_tile_line(a, b, idx[0], comment))
            return f"tile[{idx[1]}, {idx[2]}]"
        acc = f"acc{i + 1}"
        if cplan.row:
            self.opening += row_lines(cplan, ins, a, b, idx, extents, acc)
            self.opening[-1] += comment
            return f"{acc}[{', '.join(idx[1:])}]"
        self.body += accumulate_lines(cplan, ins, a, b, idx, acc)
        self.body[-1] += comment
        return acc

    def store(self, i: int, ins: Instruction, expr: str, loop: tuple[np.dtype, ...] | None, comment: str) -> None:
        """The line giving instruction ``i``'s output element its value: the output itself,
        or its local (a promoted view, stored once at the body's end)."""
        op, out = ins.opcode, ins.outputs[0]
        if (out.dtype != "float64" or any(isinstance(x, View) and x.dtype != "float64" for x in ins.inputs)) \
                and op not in OpFamily.GATHER or op is Opcode.RANGE or loop is not None and loop[-1].name != "float64" \
                or not any(isinstance(x, View) for x in ins.inputs) and op is Opcode.COPY:
            # typed as the output (a prange index is unsigned: -i0 must not wrap)
            expr = f"{_np_type(out.dtype)}({float_to_int(ins, expr, loop)})"
        if out.base.name in self.local or out.ndim == 0 or out not in self.lay.promoted:
            self.body.append(f"{self.ref(out)} = {expr}{comment}")
        else:
            if out not in self.written:
                name = self.arg(out)
                k = sum(1 for w in self.written if self.arg(w) == name)
                self.store_of[i] = len(self.stores)
                self.stores.append(f"{self.memory(out)} = {name}_w{k or ''}  # {format_view(out)} stored once")
                self.written[out] = f"{name}_w{k or ''}"
            self.body.append(f"{self.written[out]} = {expr}{comment}")
        self.spans[i] = (self.spans[i][0], len(self.body))

    def filter(self, i: int, ins: Instruction, ops: list[str], comment: str) -> None:
        """A COMPRESS's lines (:func:`filter_lines`)."""
        out = ins.outputs[0]
        target = None if out.base.name in self.local else self.arg(out)
        chunks, slot = compaction_chunks(self.lay.two_pass, self.lay.split, self.extents, self.u, _CHUNK)
        got = filter_lines(i, ins, ops[0], ops[1], target, comment, chunks, slot)
        self.pre += got.pre
        self.opening += got.opening
        self.body += got.body
        self.closing += got.closing
        self.post += got.post

    def reduction(self, r: Reduction, ins: Instruction, ops: list[str], comment: str) -> None:
        """A reduction's lines, in the form its layout gives it."""
        i, op, out = r.index, ins.opcode, ins.outputs[0]
        if r.form is ReductionForm.DEAD:
            self.post.append(f"# {i + 1}: {format_instruction(ins)} (freed unread: not computed, never allocated)")
            return
        (src,) = ops
        if op in OpFamily.ARG_REDUCTION:
            self.arg_reduction(r, ins, src, comment)
            return
        idx, extents, rank, a = self.idx, self.extents, self.lay.rank, f"acc{i + 1}"
        if r.form is ReductionForm.PARTIALS:
            self.partials(r, ins, src, comment)
            return
        src, guard = self.fold_element(i, ins, src)
        if r.form is ReductionForm.SPLIT:
            keep = [idx[k] for k in range(1, rank)]
            self.pre.append(f"{a}_part = np.empty((nsp, {', '.join(extents[1:])}), dtype={_np_type(out.dtype)})")
            self.opening.append(f"{a}_part[sp].fill({_identity(op, out.dtype)})")
            target = f"{a}_part[sp, {', '.join(keep)}]"
            if not guard:
                self.split_updates.append(SplitUpdate(len(self.body), a, op, src, out.dtype, comment))
            self.body.append(f"{guard}{target} = " + OPCODES[op].combine.format(a=target, b=src) + comment)
            self.post += combine_split_parts(op, a, self.arg(out), extents[1:], self.lay.parallel, i)
        elif r.form is ReductionForm.INNER:
            inner = self.lay.innermost
            assert inner is not None
            got = _inner_reduction(i, ins, src, f"{self.arg(out)}[{', '.join(idx[:inner] + idx[inner + 1:])}]")
            self.inner_accs.append(a)
            self.inner_open.append(got[0])
            self.body.append(guard + got[1] + comment)
            self.inner_close.append(got[2])
        else:
            keep = [idx[k] for k in range(rank) if k != r.axis]
            target = f"{self.arg(out)}[{', '.join(keep)}]"
            self.pre.append(f"{self.arg(out)}.fill({_identity(op, out.dtype)})  # {i + 1}: start the reduction")
            self.body.append(f"{guard}{target} = " + OPCODES[op].combine.format(a=target, b=src) + comment)

    def arg_reduction(self, r: Reduction, ins: Instruction, src: str, comment: str) -> None:
        """An arg reduction's lines: a running extreme in the input's dtype and its index
        (int64), replaced only by a strictly better element (:func:`arg_step`), so ties keep
        the first and a NaN the first NaN; partial results combined in the input's order."""
        i, op, out, lay = r.index, ins.opcode, ins.outputs[0], self.lay
        idx, extents, rank, a = self.idx, self.extents, lay.rank, f"acc{i + 1}"
        dt = ins.views_in[0].dtype
        start = [f"{a}_v = {_identity(op, dt)}", f"{a}_k = np.int64(0)"]
        if r.form is ReductionForm.PARTIALS:
            flat = " + ".join(f"{idx[k]}" + "".join(f" * {extents[b]}" for b in range(k + 1, rank))
                              for k in range(rank))   # the flat C index, as np.argmin(axis=None) counts
            slot = "chunk" if lay.chunked else "sp" if lay.split else idx[0]
            size = f"(({extents[0]} + {self.u(_CHUNK - 1)}) // {self.u(_CHUNK)})" if lay.chunked else \
                "nsp" if lay.split else extents[0]
            self.pre += [f"{a}_pv = np.empty({size}, dtype={_np_type(dt)})",
                         f"{a}_pk = np.empty({size}, dtype=np.int64)"]
            self.opening += start
            self.body.append(arg_step(op, dt, src, f"({flat})", f"{a}_v", f"{a}_k") + comment)
            self.closing += [f"{a}_pv[{slot}] = {a}_v", f"{a}_pk[{slot}] = {a}_k"]
            self.post += arg_partials_lines(op, dt, a, self.ref(out), i)
        elif r.form is ReductionForm.SPLIT:
            at = ", ".join(["sp"] + [idx[k] for k in range(1, rank)])
            for part, dtype, first in ((f"{a}_pv", _np_type(dt), _identity(op, dt)), (f"{a}_pk", "np.int64", "0")):
                self.pre.append(f"{part} = np.empty((nsp, {', '.join(extents[1:])}), dtype={dtype})")
                self.opening.append(f"{part}[sp].fill({first})")
            self.body.append(arg_step(op, dt, src, idx[0], f"{a}_pv[{at}]", f"{a}_pk[{at}]") + comment)
            self.post += arg_split_lines(op, dt, a, self.arg(out), extents[1:], lay.parallel, i)
        elif r.form is ReductionForm.INNER:
            inner = lay.innermost
            assert inner is not None
            self.inner_open += start
            self.body.append(arg_step(op, dt, src, idx[inner], f"{a}_v", f"{a}_k") + comment)
            self.inner_close.append(f"{self.arg(out)}[{', '.join(idx[:inner] + idx[inner + 1:])}] = {a}_k"
                                    f"  # {i + 1}: stored once, after its loop")
        elif r.form is ReductionForm.AXIS:
            keep = ", ".join(idx[k] for k in range(rank) if k != r.axis)
            shape = ", ".join(extents[k] for k in range(rank) if k != r.axis)
            self.pre += [f"{a}_v = np.empty(({shape},), dtype={_np_type(dt)})",
                         f"{a}_v.fill({_identity(op, dt)})  # {i + 1}: the running extremes",
                         f"{self.arg(out)}.fill(0)  # {i + 1}: and their indices"]
            self.body.append(arg_step(op, dt, src, idx[r.axis], f"{a}_v[{keep}]", f"{self.arg(out)}[{keep}]") + comment)
        else:  # pragma: no cover - the forms are exhausted above (DEAD and ELEMENT: elsewhere)
            raise AssertionError(f"{op.name} has no {r.form.value} form")

    def histogram(self, i: int, ins: Instruction, ops: list[str], comment: str) -> None:
        """A BINCOUNT's lines (:func:`~fusionlab.backend.numba.emit.histogram_lines`): one row of
        bins per chunk when the kernel runs chunks in parallel, else one row; a 1-D kernel in
        chunks counts each chunk from a buffer of its bins, after its element loop."""
        lay = self.lay
        parallel = lay.parallel and lay.chunked
        rows = f"(({self.extents[0]} + {self.u(_CHUNK - 1)}) // {self.u(_CHUNK)})" if parallel else "1"
        chunk = None
        if parallel and lay.rank == 1 and not (lay.split or lay.tiled or lay.scans):
            start = f"chunk * {self.u(_CHUNK)}"
            chunk = ChunkLoop(self.idx[0], start, f"min({self.extents[0]}, (chunk + {self.u(1)}) * {self.u(_CHUNK)}) - {start}",
                              _CHUNK)
        h = histogram_lines(i, self.arg(ins.outputs[0]), _np_type(ins.outputs[0].dtype), ops, rows,
                            "chunk" if parallel else "0", parallel, comment, chunk)
        self.pre += h.pre
        self.opening += h.opening
        self.body += h.body
        self.closing += h.closing
        self.post += h.post

    def partials(self, r: Reduction, ins: Instruction, src: str, comment: str) -> None:
        """A reduction over everything: a scalar accumulator per outer iteration (or chunk,
        or range) stays in a register; the partial results are combined after the loop."""
        i, op, out, lay = r.index, ins.opcode, ins.outputs[0], self.lay
        idx, extents, rank, a = self.idx, self.extents, lay.rank, f"acc{i + 1}"
        src, guard = self.fold_element(i, ins, src)
        slot = "chunk" if lay.chunked else "sp" if lay.split else idx[0]
        size = f"(({extents[0]} + {self.u(_CHUNK - 1)}) // {self.u(_CHUNK)})" if lay.chunked else \
            "nsp" if lay.split else extents[0]
        self.pre.append(f"{a}_part = np.empty({size}, dtype={_np_type(out.dtype)})")
        self.opening.append(f"{a} = {_identity(op, out.dtype)}")
        if not guard and laned_extreme(lay, op, out.dtype):   # selects in lanes (lanes)
            self.laned.append((i, op, out.dtype))
            got = laned_lines(a, op, src, out.dtype, slot, comment)
            self.opening += got[0]
            self.body += got[1]
            self.closing += got[2]
        else:
            select = fold_select(lay.filters, i, op, ins.views_in[0].dtype, out.dtype) if guard else None
            if select is not None:   # the filter's mask as a select, not a branch (fold_select)
                guard, src = "", f"({src} if {select[0]} else {select[1]})"
            self.body.append(f"{guard}{a} = " + OPCODES[op].combine.format(a=a, b=src) + comment)
            self.closing.append(f"{a}_part[{slot}] = {a}")
        # an explicit loop in order, not ``{a}_part.max()``: in a parallel kernel Numba turns
        # that call into a parfor reduction whose max/min drop NaN (NumPy propagates it)
        self.post += [f"{a}_v = {_identity(op, out.dtype)}  # {i + 1}: the partial results combined in order",
                      f"for sp in range({a}_part.shape[0]):",
                      f"    {a}_v = " + OPCODES[op].combine.format(a=f"{a}_v", b=f"{a}_part[sp]"),
                      f"{self.ref(out)} = {a}_v"]

    def fold_element(self, i: int, ins: Instruction, src: str) -> tuple[str, str]:
        """A reduction's element and the guard it is folded under (:func:`fold_element`)."""
        v = ins.views_in[0]
        return fold_element(self.lay.filters, i, v, self.arg(v) if v in self.lay.slot else None, src, self.idx, self.extents)

    # ------------------------------------------------------------------ the loop nest
    def source(self) -> str:
        """The kernel's source: decorator, signature, argument comments, constants, the
        lines before the loops, the loop nest, and the lines after it."""
        lay = self.lay
        self.emit_body()
        setup = [f"    nsp = {split_ranges_source(lay, self.extents, self.u)}  # ranges of axis 0"] if lay.split else []
        nest = self.loops()
        nest += [f"        {x}" for x in self.closing]
        nest += [f"    {p}" for p in self.post]
        # the offsets after the extents, once the loops have named every one
        params = list(self.names.arguments) + [f"rnd{k}" for k in range(len(lay.randoms))] + list(self.extents) \
            + [f"o{k}" for k in range(len(self.offsets))] + [f"c{k}" for k in range(len(self.constants))]
        # reassociation lets the accumulations vectorise; results differ from NumPy's pairwise
        # sums in the last bits (the tests compare with a tolerance)
        fast = ", fastmath={'reassoc'}" if (lay.full_reductions or lay.reduced_axes or lay.contraction is not None) \
            and not lay.scans else ""
        # NumPy's error model: division by zero gives inf, nan or 0 (integers), never raises
        lines = [f"@numba.njit(parallel={lay.parallel}{fast}, error_model='numpy', cache=True)",
                 f"def kernel({', '.join(params)}):"]
        lines += self.argument_comments()
        if self.unsigned:
            ks = sorted(self.unsigned)
            lines.append(f"    {', '.join(f'u{k}' for k in ks)} = {', '.join(f'np.uint64({k})' for k in ks)}"
                         "  # unsigned offsets: no negative-index checks")
        kernel = "\n".join(lines + setup + [f"    {p}" for p in self.pre] + nest)
        helpers = kernel_helpers(self.lay.instructions, kernel) + math_helpers_in(kernel)
        return "".join(h + "\n\n" for h in helpers) + kernel

    def argument_comments(self) -> list[str]:
        """One comment per argument: the view it is, or the whole base it indexes."""
        out = []
        for name, v in zip(self.names.arguments, self.lay.arguments):
            views = [format_view(w) for w, _, c in self.lay.views if c is not None and w.base.name == v.base.name]
            if views and v == v.base.view() and views != [format_view(v)]:
                out.append(f"    # {name} = {v.base.name} (whole; indexed for {', '.join(views)})")
            else:
                out.append(f"    # {name} = {format_view(v)}")
        out += [f"    # c{k} = {constant_text(c)}" for k, c in enumerate(self.constants)]
        return out

    def loops(self) -> list[str]:
        """The loop nest around the body: split ranges, chunks, the chunked scan, BLAS tiles,
        then one loop per axis of ``loop_order``."""
        lay, idx, extents, u = self.lay, self.idx, self.extents, self.u
        prange = "numba.prange" if lay.parallel else "range"
        lines: list[str] = []
        indent = "    "
        if lay.split:   # ranges of the first axis in parallel, each with its partial results
            lines.append(f"{indent}for sp in {prange}(nsp):")
            lines += [f"{indent}    {x}" for x in self.opening]
            if row_laned(lay, self.split_updates):   # rows taken ROW_LANES at once
                return lines + [f"{indent}    {x}" for x in row_laned_lines(
                    self.body, self.stores, self.inner_open, self.inner_close, self.split_updates,
                    self.inner_accs, idx, extents, lay.loop_order, u)]
            lines.append(f"{indent}    for {idx[0]} in range(sp * {extents[0]} // nsp, (sp + {u(1)}) * {extents[0]} // nsp):")
            indent += "        "
        if lay.chunked:  # one partial result per chunk, not per element
            lines.append(f"{indent}for chunk in {prange}(({extents[0]} + {u(_CHUNK - 1)}) // {u(_CHUNK)}):")
            lines += [f"{indent}    {x}" for x in self.opening]
            if self.laned:
                chunk = buffered_chunk(self.body + self.stores, self.laned, extents[0], idx[0], u) or \
                    unrolled_chunk(self.body + self.stores, self.laned, extents[0], idx[0], u)
                return lines + [f"{indent}    {x}" for x in chunk]
            lines.append(f"{indent}    for {idx[0]} in range(chunk * {u(_CHUNK)}, min({extents[0]}, (chunk + {u(1)}) * {u(_CHUNK)})):")
            indent += "        "
        one_scan = bool(lay.scans) and lay.rank == 1
        if one_scan:
            lines += self.chunked_scan()
        if lay.tiled:   # blocks of rows in parallel, each its rows of the product (BLAS) then the rest
            lines.append(f"{indent}for rb in {prange}(({extents[0]} + {u(TILE_ROWS - 1)}) // {u(TILE_ROWS)}):")
            indent += "    "
            lines += [f"{indent}{x}" for x in self.opening_tile]
        order = lay.loop_order
        for depth, a in enumerate(order):
            loop = "numba.prange" if depth == 0 and lay.parallel and not lay.split and not lay.tiled else "range"
            if lay.scans and depth == len(order) - 1:
                lines += [f"{indent}{acc} = {_identity(lay.instruction(k).opcode.combining, dt.name)}"
                          for k, acc, dt in self.accs]
            if depth == len(order) - 1:
                lines += [f"{indent}{x}" for x in self.inner_open]
            bounds = "r0, r1" if lay.tiled and depth == 0 else extents[a]
            lines.append(f"{indent}for {idx[a]} in {loop}({bounds}):")
            indent += "    "
            if depth == 0 and not lay.split:
                lines += [f"{indent}{x}" for x in self.opening]
        if not one_scan:
            lines += [f"{indent}{b}" for b in self.body or ["pass"]]   # "pass": every instruction dead
            lines += [f"{indent}{x}" for x in self.stores]
            lines += [f"{indent[:-4]}{x}" for x in self.inner_close]
        return lines

    def chunked_scan(self) -> list[str]:
        """A one-dimensional scan block: the serial scan in one pass when one thread runs it
        (a serial kernel, or ``thread_count() == 1`` at run time: the other cores busy), else
        the two-pass chunked scan. Chosen inside the kernel, so one compiled (and cached)
        kernel serves every thread count; the serial form combines in NumPy's order (exact),
        the chunked one reassociates at the chunk boundaries (docs/reductions-and-scans.md)."""
        serial = self.serial_scan()
        if not self.lay.parallel:
            return [f"    {line}" for line in serial]
        return (["    if thread_count() == 1:  # one thread: the serial scan, one pass"]
                + [f"        {line}" for line in serial] + ["    else:  # threads: the chunked scan, two passes"]
                + [f"    {line}" for line in self.two_pass_scan()])

    def serial_scan(self) -> list[str]:
        """The scan block as one serial loop: each accumulator from its identity, the whole
        body and the stores per element (004's scanomap run sequentially)."""
        lines = [f"{a} = {_identity(self.lay.instruction(k).opcode.combining, dt.name)}" for k, a, dt in self.accs]
        parts = self.strip_parts()
        if parts is not None:   # the maps in a loop of their own, strip by strip (fusionlab.backend.numba.strip)
            return lines + strip_lines(parts, self.extents[0], self.u(STRIP), self.u(STRIP - 1))
        return lines + [f"for i0 in range({self.extents[0]}):"] + [
            f"    {line}" for line in (self.body or ["pass"]) + self.stores]

    def strip_parts(self) -> StripParts | None:
        """The scan's lines split for strips (:func:`~fusionlab.backend.numba.strip.split_for_strips`)."""
        busy = bool(self.pre or self.opening or self.closing or self.inner_open or self.inner_close)
        return split_for_strips(self.lay, EmittedScan(tuple(self.body), dict(self.spans), tuple(self.stores),
                                                      dict(self.store_of), tuple(self.accs), dict(self.scan_value),
                                                      dict(self.vector_calls)), busy)

    def two_pass_scan(self) -> list[str]:
        """A one-dimensional scan block as 004's chunked scanomap, in two parallel passes over
        chunks with an exclusive scan of the chunk totals between them (serial: one per chunk).

        When the scans' outputs are stored anyway (``KernelLayout.stored_scan``), the first
        pass runs the maps feeding the scans once and stores each chunk's local scan; the
        second adds the chunk's carry to it and runs the consumers: the maps are computed once
        (a sine map before a cumsum of 2,000,000: 59 ms per kernel recomputing it, 24-47 ms
        storing). Otherwise (the scan's output contracted) the first pass computes each
        chunk's total of the scanned values with the maps recomputed and nothing stored, then
        the second runs the whole body from each chunk's carry; the last chunk's total is
        never needed, so the first pass skips it. Where the block splits for strips
        (:func:`~fusionlab.backend.numba.strip.split_for_strips`), the passes that compute the maps
        run them strip by strip, vectorised: a cumsum of a sine map whose scan is contracted
        recomputed libm's scalar ``sin`` in both passes (17.7 ms on two threads at 2,000,000
        elements, where the one-thread strips took 4.2)."""
        lay, u, n, accs, spans, body = self.lay, self.u, self.extents[0], self.accs, self.spans, self.body or ["pass"]
        memory = {i: self.memory(lay.instruction(i).outputs[0]) for i, _, dt in accs
                  if lay.instruction(i).outputs[0].base.name not in self.local
                  and lay.instruction(i).outputs[0].dtype == dt.name}
        combining = {i: lay.instruction(i).opcode.combining for i, _, _ in accs}
        loop = "numba.prange" if lay.parallel else "range"
        rows = f"range(chunk * {u(_CHUNK)}, min({n}, (chunk + {u(1)}) * {u(_CHUNK)}))"
        scans, needed, stored = set(combining), lay.scan_feeders, lay.stored_scan
        early = {self.store_of[i] for i in needed - scans if i in self.store_of} if stored else set()   # pass 1's stores
        first = [line for i in sorted(needed) for line in
                 (body[spans[i][0]:spans[i][0] + 1] if i in scans else body[spans[i][0]:spans[i][1]])]
        second = []
        if stored:   # the local scan stored; the second pass adds the carry to it
            first += [self.stores[k] for k in sorted(early)]
            first += [f"{memory[i]} = {a}  # {i + 1}: the chunk's local scan" for i, a, _ in accs]
            for i in sorted(spans):
                if i in scans:
                    a, dt = next((a, dt) for k, a, dt in accs if k == i)
                    step = OPCODES[combining[i]].combine.format(a=f"{a}_c", b=memory[i])
                    second.append(f"{a} = {_np_type(dt.name)}({step})  # {i + 1}: the carry added")
                    second += body[spans[i][0] + 1:spans[i][1]]
                elif i not in needed:
                    second += body[spans[i][0]:spans[i][1]]
        out = [f"    nch = (({n} + {u(_CHUNK - 1)}) // {u(_CHUNK)})"]
        out += [f"    {a}_tot = np.full(nch, {_identity(combining[k], dt.name)})" for k, a, dt in accs]
        out.append(f"    for chunk in {loop}({'nch' if stored else f'nch - {u(1)}'}):  # pass 1: each chunk's total"
                   + (" and local scan" if stored else ""))
        out += [f"        {a} = {_identity(combining[k], dt.name)}" for k, a, dt in accs]
        # the chunk's maps strip by strip, vectorised (sine and cosine as polynomials): in both
        # passes when the scan is contracted, else in the first (the second reads its store)
        parts = self.strip_parts()
        if parts is not None:
            local = [f"{memory[i]} = {a}  # {i + 1}: the chunk's local scan" for i, a, _ in accs] if stored else []
            out += chunk_strip_lines(parts, local, n, u(_CHUNK), u(1), u(STRIP), u(STRIP - 1), early=stored)
        else:
            out.append(f"        for i0 in {rows}:")
            out += [f"            {line}" for line in first]
        out += [f"        {a}_tot[chunk] = {a}" for _, a, _ in accs]
        out += carry_lines([(combining[k], a, dt) for k, a, dt in accs])
        out.append(f"    for chunk in {loop}(nch):  # pass 2: " + ("the carry added, the consumers" if stored
                                                              else "the body, from each chunk's carry"))
        out += [f"        {a}{'_c' if stored else ''} = {a}_tot[chunk]" for _, a, _ in accs]
        if parts is not None and not stored:
            return out + chunk_strip_lines(parts, None, n, u(_CHUNK), u(1), u(STRIP), u(STRIP - 1))
        out.append(f"        for i0 in {rows}:")
        out += [f"            {line}" for line in (second if stored else list(body))
                + [line for k, line in enumerate(self.stores) if k not in early]]
        return out
