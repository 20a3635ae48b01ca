"""The parts of a kernel's source that need no per-opcode table: the dtypes NumPy computes
an element-wise instruction in (:func:`loop_dtypes`, read by the kernels and the reference
executor alike), and the lines of gathers and filters. :mod:`fusionlab.backend.numba.codegen` writes the
rest of the kernel from its :class:`~fusionlab.backend.numba.layout.KernelLayout`.

Examples
--------
>>> np_type("bool"), np_type("int8")
('np.bool_', 'np.int8')
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from fusionlab.ir.bytecode import OPCODES, Instruction, Literal, Opcode, OpFamily, View, loop_dtypes
from fusionlab.backend.numba.layout import FilterPlan

__all__ = ["constant_text", "typed_operand", "np_type", "loop_dtypes", "float_to_int", "weak_result", "GatherLines", "gather_lines", "FilterLines", "filter_lines", "fold_source",
           "fold_element", "is_fold", "compaction_chunks", "arg_step", "arg_partials_lines", "arg_split_lines",
           "HistogramLines", "ChunkLoop", "histogram_lines"]


def np_type(dtype: str) -> str:
    return "np.bool_" if dtype == "bool" else f"np.{dtype}"


def constant_text(v: bool | int | float | complex) -> str:
    """A literal's value as source Numba reads (nan and the infinities by name). A complex
    value is written from its parts as floats: ``repr`` gives ``(-0+1j)``, whose ``-0`` a
    driver's table of integers (:mod:`fusionlab.backend.numba.driver_loops`) would take for an
    integer, losing the zero's sign.

    >>> constant_text(0.1), constant_text(float("-inf")), constant_text(1e-05), constant_text(complex(-0.0, 2))
    ('0.1', '-np.inf', '1e-05', 'complex(-0.0, 2.0)')
    """
    if isinstance(v, float):
        if v != v:
            return "np.nan"
        if v in (float("inf"), float("-inf")):
            return "np.inf" if v > 0 else "-np.inf"
    if isinstance(v, complex):
        return f"complex({constant_text(v.real)}, {constant_text(v.imag)})"
    return repr(v)


def typed_operand(text: str, x: View | Literal, dtype: np.dtype) -> str:
    """An operand's expression in ``dtype``: literals always typed, views when they differ."""
    if dtype.kind not in "biufc":
        return text
    if isinstance(x, Literal) or x.dtype != dtype.name:
        return f"{np_type(dtype.name)}({text})"
    return text


#: integer types a float is converted to through int64, as NumPy's C casts do on x86-64:
#: to 8 and 16 bits through a 32-bit int, to unsigned 32 and 64 through a 64-bit one (an
#: out-of-range value wraps; LLVM's direct conversion leaves it undefined, and its vector
#: and scalar loops differed: -250.0 -> uint16 gave 0 in the last 8 elements, 65286 before)
_WRAPPED_FROM_FLOAT = frozenset({"int8", "int16", "uint8", "uint16", "uint32", "uint64"})


def float_to_int(ins: Instruction, expr: str, loop: tuple[np.dtype, ...] | None) -> str:
    """``expr`` (the value instruction ``ins`` stores) through ``np.int64`` when it is a
    float stored into an integer type of :data:`_WRAPPED_FROM_FLOAT`.

    >>> from fusionlab import parse
    >>> p = parse("ARRAY A float64[4]\\nARRAY B uint8[4]\\nCOPY B, A")
    >>> float_to_int(p[0], "a", None)
    'np.int64(a)'
    """
    out = ins.outputs[0].dtype
    if out not in _WRAPPED_FROM_FLOAT:
        return expr
    if loop is not None:
        kind = loop[-1].kind
    elif ins.opcode is Opcode.COPY and isinstance(ins.inputs[0], View):
        kind = np.dtype(ins.inputs[0].dtype).kind
    else:
        return expr
    return f"np.int64({expr})" if kind == "f" else expr


def weak_result(ins: Instruction, xs: Sequence[View | Literal]) -> np.dtype:
    """``np.result_type`` of operands with Python scalars weak (NumPy 2), as ``np.where``."""
    return np.result_type(*[np.dtype(x.dtype) if isinstance(x, View) else x.value for x in xs])




# --------------------------------------------------------------------------- gathers (see layout)


@dataclass(frozen=True)
class GatherLines:
    """A GATHER's lines: its flag before the loops, each index checked in the body, the
    element read (``expr``), and the flag's check after the loops."""

    pre: list[str]
    body: list[str]
    expr: str
    post: list[str]


def gather_lines(i: int, ins: Instruction, src: str, indices: Sequence[str], loop_index: Sequence[str]) -> GatherLines:
    """The element ``src[...]`` of GATHER ``i`` and the lines that make it safe: each index
    wrapped when negative (as NumPy does; an unsigned one never is) and checked against its
    axis's extent. The indices were inside at capture; one computed otherwise in a fused run
    (a rounding) is never used: the read takes element 0 instead, a flag is set, and
    :class:`~fusionlab.backend.numba.guards.IndexOutOfRange` is raised after the loops (a raise in
    a ``prange`` would serialise it). The source's untouched first ``axis`` axes are indexed
    by the output's first loop indices and its untouched last axes by the output's last ones.

    >>> from fusionlab import parse
    >>> p = parse("ARRAY M float64[3,4]\\nARRAY J int32[2]\\nARRAY Y float64[2,4]\\nGATHER Y, M, J[:, None]")
    >>> g = gather_lines(0, p[0], "M", ["J[i0]"], ["i0", "i1"])
    >>> print("\\n".join(g.pre + g.body + [g.expr] + g.post))
    acc1_bad = np.zeros(1, dtype=np.bool_)  # 1: set by an index outside its axis
    acc1_j0 = np.int64(J[i0])
    if acc1_j0 < 0:
        acc1_j0 += M.shape[0]
    if acc1_j0 < 0 or acc1_j0 >= M.shape[0]:
        acc1_bad[0] = True
        acc1_j0 = 0
    M[acc1_j0, i1]
    if acc1_bad[0]:  # 1: an index NumPy had inside its axis at capture
        raise IndexOutOfRange(0)
    >>> p = parse("ARRAY M float64[3,4]\\nARRAY J uint8[2]\\nARRAY Y float64[3,2]\\nGATHER Y, M, J, axis=1")
    >>> g = gather_lines(0, p[0], "M", ["J[i1]"], ["i0", "i1"])
    >>> print("\\n".join(g.body + [g.expr]))
    acc1_j0 = np.uint64(J[i1])
    if acc1_j0 >= np.uint64(M.shape[1]):
        acc1_bad[0] = True
        acc1_j0 = np.uint64(0)
    M[i0, acc1_j0]
    """
    source, *index_views = ins.views_in
    a, rank, g = ins.attr("axis", 0), len(loop_index), f"acc{i + 1}"
    parts = [loop_index[rank - ins.outputs[0].ndim + j] for j in range(a)]
    body: list[str] = []
    for k, (x, e) in enumerate(zip(index_views, indices)):
        j, n = f"{g}_j{k}", f"{src}.shape[{a + k}]"
        if np.dtype(x.dtype).kind == "u":
            body += [f"{j} = np.uint64({e})", f"if {j} >= np.uint64({n}):", f"    {g}_bad[0] = True",
                     f"    {j} = np.uint64(0)"]
        else:
            body += [f"{j} = np.int64({e})", f"if {j} < 0:", f"    {j} += {n}", f"if {j} < 0 or {j} >= {n}:",
                     f"    {g}_bad[0] = True", f"    {j} = 0"]
        parts.append(j)
    rest = source.ndim - a - len(index_views)
    parts += [loop_index[rank - rest + j] for j in range(rest)]
    return GatherLines([f"{g}_bad = np.zeros(1, dtype=np.bool_)  # {i + 1}: set by an index outside its axis"], body,
                       f"{src}[{', '.join(parts)}]",
                       [f"if {g}_bad[0]:  # {i + 1}: an index NumPy had inside its axis at capture",
                        f"    raise IndexOutOfRange({i})"])

# --------------------------------------------------------------------------- filters (issue 14; 002)
# how a block's filters run in its loop: see layout's FilterPlan


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
                 chunks: tuple[str, str, str] | None = None, slot: str = "chunk") -> FilterLines:
    """The lines of COMPRESS ``c``: the element and mask bit as locals and, when its output
    is written (``target``: the output's argument), the compaction. Serial: a running count.
    With ``chunks`` (the chunk count, the chunk size and 1, unsigned; a parallel loop over
    chunks), two passes: each chunk compacts into its own slice of a buffer and counts, then
    the exclusive prefix sums of the counts place each chunk's run in the output (``slot``:
    the parallel loop's variable, ``chunk``, or ``sp`` over ranges of rows).

    The output holds the count NumPy selected at capture; a fused run may select another
    (a value rounded to the other side of the mask's threshold). No write goes past the
    output: the serial form writes only below its length, the chunked form checks the total
    before it copies the runs; either raises :class:`~fusionlab.backend.numba.guards.FilterCountMismatch`
    after its loop when the count differs (:mod:`fusionlab.backend.numba.guards`).

    >>> from fusionlab import parse
    >>> p = parse("ARRAY X float64[8]\\nARRAY M bool[8]\\nARRAY Y float64[3]\\nCOMPRESS Y, X, M")
    >>> f = filter_lines(0, p[0], "a0[i0]", "a1[i0]", "a2", "")
    >>> print("\\n".join(f.pre + ["# body:"] + f.body + ["# after:"] + f.post))
    acc1_count = 0
    # body:
    acc1_val = a0[i0]
    acc1_keep = a1[i0]
    if acc1_keep:
        if acc1_count < a2.shape[0]: a2[acc1_count] = acc1_val  # compacted, in C order
        acc1_count += 1
    # after:
    if acc1_count != a2.shape[0]:  # 1: the count NumPy selected at capture
        raise FilterCountMismatch(0)
    """
    val, keep, count = _filter_locals(c)
    out = ins.outputs[0]
    expr = data if ins.views_in[0].dtype == out.dtype else f"{np_type(out.dtype)}({data})"
    body = [f"{val} = {expr}{comment}", f"{keep} = {mask}"]
    if target is None:
        return FilterLines([], [], body, [], [])
    pre: list[str] = []
    if out.ndim > 1:   # selected rows: their elements in C order are the selected elements in the loop's
        pre.append(f"acc{c + 1}_rows = {target}.reshape({target}.size)  # {c + 1}: the selected rows, flat")
        target = f"acc{c + 1}_rows"
    check = [f"if {count} != {target}.shape[0]:  # {c + 1}: the count NumPy selected at capture",
             f"    raise FilterCountMismatch({c})"]
    if chunks is None:
        body += [f"if {keep}:", f"    if {count} < {target}.shape[0]: {target}[{count}] = {val}  # compacted, in C order",
                 f"    {count} += 1"]
        return FilterLines(pre + [f"{count} = 0"], [], body, [], check)
    n, size, one = chunks
    buf, counts, at, k, j = (f"acc{c + 1}_{x}" for x in ("buf", "counts", "at", "chunk", "j"))
    body.append(f"if {keep}: {buf}[{slot} * {size} + {count}] = {val}; {count} += {one}  # this chunk's run")
    pre += [f"{buf} = np.empty({n} * {size}, dtype={np_type(out.dtype)})",
            f"{counts} = np.empty({n}, dtype=np.uint64)"]
    post = [f"{at} = np.empty({n}, dtype=np.uint64)  # {c + 1}: where each chunk's run starts in {out.base.name}",
            f"{count} = np.uint64(0)",
            f"for {k} in range({n}):",
            f"    {at}[{k}] = {count}",
            f"    {count} += {counts}[{k}]",
            *check,
            f"for {k} in numba.prange({n}):",
            f"    for {j} in range({counts}[{k}]):",
            f"        {target}[{at}[{k}] + {j}] = {buf}[{k} * {size} + {j}]"]
    return FilterLines(pre, [f"{count} = np.uint64(0)"], body, [f"{counts}[{slot}] = {count}"], post)


def fold_source(plan: FilterPlan, r: int, src_arg: str | None, flat: str, at: str | None = None) -> tuple[str, str]:
    """A filter-fold's element and its guard: the filter's element under its mask bit when
    the filter shares the block, else the compacted output at ``at`` (the flat loop index
    by default; a row selection's output at the loop indices), while ``flat`` (the row) is
    below its length."""
    for rr, c in plan.fused:
        if rr == r:
            val, keep, _ = _filter_locals(c)
            return val, f"if {keep}: "
    return f"{src_arg}[{at or flat}]", f"if {flat} < np.uint64({src_arg}.shape[0]): "


def compaction_chunks(two_pass: bool, split: bool, extents: Sequence[str], u: Callable[[int], str],
                      chunk: int) -> tuple[tuple[str, str, str] | None, str]:
    """The ``chunks`` and ``slot`` arguments of :func:`filter_lines` for a kernel's loop:
    none (serial), chunks of ``chunk`` elements (one dimension) or the ``nsp`` ranges of the
    first axis (n-d: a range holds at most its rows' elements); ``u(k)`` names the unsigned
    constant k.

    >>> compaction_chunks(True, True, ["n0", "n1"], lambda k: f"u{k}", 4096)
    (('nsp', '((n0 + nsp - u1) // nsp) * n1', 'u1'), 'sp')
    """
    if two_pass and split:
        return ("nsp", " * ".join([f"(({extents[0]} + nsp - {u(1)}) // nsp)", *extents[1:]]), u(1)), "sp"
    if two_pass:
        return (f"(({extents[0]} + {u(chunk - 1)}) // {u(chunk)})", u(chunk), u(1)), "chunk"
    return None, "chunk"


def fold_select(plan: FilterPlan | None, i: int, op: Opcode, element: str, out: str) -> tuple[str, str] | None:
    """For filter-fold ``i`` whose filter shares the block (its element is always there to
    read): its mask bit's local and the value that leaves the accumulator exactly as it was
    (-0.0 for a float sum: ``a + -0.0 == a`` for every ``a``, -0.0 and NaN included, where
    ``a + 0.0`` turns -0.0 into 0.0; the identity for the others: ``a * 1``, ``max(a, -inf)``,
    ...), so the fold is ``acc = acc + (val if keep else -0.0)``: a select LLVM vectorises,
    where ``if keep: acc = acc + val`` is a branch on the data (Normalize2's two folds of
    20,000,000 doubles, one thread: 24.2 ms branching, 5.0 ms selecting). None where the
    element is not the accumulator's dtype (the promotion stays the combine's) or the fold
    reads a compacted output under a length guard.

    >>> plan = FilterPlan(domains=(), fused=((3, 2),), guarded=(), contracted=frozenset(), compacting=())
    >>> fold_select(plan, 3, Opcode.ADD_REDUCE, "float64", "float64")
    ('acc3_keep', 'np.float64(-0.0)')
    >>> fold_select(plan, 3, Opcode.MAXIMUM_REDUCE, "int16", "int16")
    ('acc3_keep', 'np.int16(-32768)')
    >>> fold_select(plan, 3, Opcode.ADD_REDUCE, "int32", "int64") is None
    True
    """
    if plan is None or element != out or np.dtype(out).kind not in "biuf" or OPCODES[op].identity is None:
        return None
    for r, c in plan.fused:
        if r == i:
            if op is Opcode.ADD_REDUCE and np.dtype(out).kind == "f":
                return _filter_locals(c)[1], f"{np_type(out)}(-0.0)"
            value = OPCODES[op].identity_of(out)
            text = ("np.inf" if value > 0 else "-np.inf") if isinstance(value, float) and np.isinf(value) else repr(value)
            return _filter_locals(c)[1], f"{np_type(out)}({text})"
    return None


def is_fold(plan: FilterPlan | None, i: int) -> bool:
    """Whether instruction ``i`` is a filter-fold of the block ``plan`` is of (its filter
    in the block or in an earlier one)."""
    return plan is not None and (i in plan.guarded or any(r == i for r, _ in plan.fused))


def fold_element(plan: FilterPlan | None, i: int, view: View, source: str | None, src: str,
                 idx: Sequence[str], extents: Sequence[str]) -> tuple[str, str]:
    """Reduction ``i``'s element and the guard (``"if ...: "``) it is folded under: ``src``
    and none, except for a filter-fold (:func:`fold_source`), whose compacted input
    ``view`` (the argument ``source``) is read at the flat loop index (an element
    selection) or at the loop indices (rows), below its recorded length."""
    if plan is None or not is_fold(plan, i):
        return src, ""
    rank = len(idx)
    if view.ndim > 1:   # a row selection's rows, in its data's loop
        return fold_source(plan, i, source, idx[0], ", ".join(idx[rank - view.ndim:]))
    flat = " + ".join(f"{idx[k]}" + "".join(f" * {extents[b]}" for b in range(k + 1, rank)) for k in range(rank))
    return fold_source(plan, i, source, f"({flat})")


# --------------------------------------------------------------------------- arg reductions (see codegen)


def arg_step(op: Opcode, dtype: str, value: str, index: str, running: str, at: str) -> str:
    """One element's step of arg reduction ``op`` on an input of ``dtype``: ``value`` at
    ``index`` takes the place of the running extreme ``running`` (and its index ``at``)
    when strictly better, so the first of equal values stays (NumPy's order).

    >>> arg_step(Opcode.ARGMIN_REDUCE, "int32", "x[i0]", "i0", "acc1_v", "acc1_k")
    'if x[i0] < acc1_v: acc1_v, acc1_k = x[i0], np.int64(i0)'
    """
    return f"if {OPCODES[op].better_of(dtype, running, value)}: {running}, {at} = {value}, np.int64({index})"


def arg_partials_lines(op: Opcode, dtype: str, a: str, out: str, i: int) -> list[str]:
    """Lines combining an arg reduction's partial results ``{a}_pv`` (extremes) and
    ``{a}_pk`` (their flat indices), one per chunk or range in the input's order, into
    ``out``: in that order with the element step, so a tie or a NaN keeps the earliest. A
    partial whose elements all equal the starting extreme keeps index 0 and never replaces
    an earlier one; the first starts at the input's first element, where 0 is right.

    >>> print("\\n".join(arg_partials_lines(Opcode.ARGMAX_REDUCE, "int8", "acc2", "S[0]", 1)))
    acc2_v, acc2_k = acc2_pv[0], acc2_pk[0]  # 2: the partial results combined in order
    for acc2_p in range(1, acc2_pv.shape[0]):
        if acc2_pv[acc2_p] > acc2_v: acc2_v, acc2_k = acc2_pv[acc2_p], np.int64(acc2_pk[acc2_p])
    S[0] = acc2_k
    """
    return [f"{a}_v, {a}_k = {a}_pv[0], {a}_pk[0]  # {i + 1}: the partial results combined in order",
            f"for {a}_p in range(1, {a}_pv.shape[0]):",
            "    " + arg_step(op, dtype, f"{a}_pv[{a}_p]", f"{a}_pk[{a}_p]", f"{a}_v", f"{a}_k"),
            f"{out} = {a}_k"]


def arg_split_lines(op: Opcode, dtype: str, a: str, out: str, extents: Sequence[str], parallel: bool,
                    i: int) -> list[str]:
    """Lines combining an arg reduction over axis 0 split in ranges: ``{a}_pv[sp, ...]``
    and ``{a}_pk[sp, ...]`` (each range's extremes and indices along axis 0, then the
    output's axes) into ``out``, range by range in order (as :func:`arg_partials_lines`),
    in parallel over the output's first axis.

    >>> print("\\n".join(arg_split_lines(Opcode.ARGMIN_REDUCE, "int64", "acc1", "I", ["n1"], True, 0)))
    for j1 in numba.prange(n1):  # 1: the partial results combined in order
        acc1_v, acc1_k = acc1_pv[0, j1], acc1_pk[0, j1]
        for sp in range(1, nsp):
            if acc1_pv[sp, j1] < acc1_v: acc1_v, acc1_k = acc1_pv[sp, j1], np.int64(acc1_pk[sp, j1])
        I[j1] = acc1_k
    """
    js = [f"j{k + 1}" for k in range(len(extents))]
    lines, pad = [], ""
    for depth, (j, n) in enumerate(zip(js, extents)):
        loop = "numba.prange" if depth == 0 and parallel else "range"
        lines.append(f"{pad}for {j} in {loop}({n}):" + (f"  # {i + 1}: the partial results combined in order"
                                                        if not depth else ""))
        pad += "    "
    at = ", ".join(js)
    return lines + [f"{pad}{a}_v, {a}_k = {a}_pv[0, {at}], {a}_pk[0, {at}]",
                    f"{pad}for sp in range(1, nsp):",
                    f"{pad}    " + arg_step(op, dtype, f"{a}_pv[sp, {at}]", f"{a}_pk[sp, {at}]", f"{a}_v", f"{a}_k"),
                    f"{pad}{out}[{at}] = {a}_k"]


@dataclass(frozen=True)
class HistogramLines:
    """A BINCOUNT's lines by where they go in the kernel: before the loops, at the start of
    each chunk, in the loop body, at the end of each chunk, after the loops."""

    pre: list[str]
    opening: list[str]
    body: list[str]
    post: list[str]
    closing: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ChunkLoop:
    """A 1-D kernel's chunk loop, as a buffered histogram needs it: the loop's index, the
    chunk's first element and the number of its elements (expressions)."""

    index: str
    start: str
    count: str
    size: int


def histogram_lines(i: int, out: str, kind: str, ops: Sequence[str], rows: str, slot: str, parallel: bool,
                    comment: str, chunk: ChunkLoop | None = None) -> HistogramLines:
    """A BINCOUNT's lines: each chunk counts (or sums the weights ``ops[1]``) into its own
    row ``slot`` of ``rows`` rows of bins; a value outside them sets the row's flag, and a
    set flag raises :class:`~fusionlab.backend.numba.guards.HistogramOutOfRange` (a ValueError) after the loop (the kernel stays usable); else the
    rows are summed into ``out`` (in parallel over the bins when ``parallel``).

    With ``chunk`` (a 1-D kernel in chunks) the counting leaves the element loop: the loop
    writes each element's bin (and weight) into a buffer of the chunk and keeps the least
    and largest bin, with no branch and no store into the bins, so the maps computing the
    bins vectorise (a division, a conversion); at the chunk's end one check of those two
    and a tight loop count the buffer. The same elements are added in the same order, so
    the counts and the weights' sums are those of the unbuffered form (measured on one
    thread, a map and a count of 10^6 values: 1.84 -> 1.08 ms).

    >>> h = histogram_lines(0, "H", "np.int64", ["X[i0]"], "1", "0", False, "  # 1: BINCOUNT H, X")
    >>> print("\\n".join(h.body))
    acc1_k = np.int64(X[i0])
    if acc1_k < 0 or acc1_k >= acc1_n:  # 1: BINCOUNT H, X
        acc1_bad[0] = True
    else:
        acc1[acc1_k] += 1
    >>> h = histogram_lines(0, "H", "np.int64", ["X[i0]"], "nch", "chunk", True, "  # 1: BINCOUNT H, X",
    ...                     ChunkLoop("i0", "chunk * u4096", "min(n0, (chunk + u1) * u4096) - chunk * u4096", 4096))
    >>> print("\\n".join(h.body + ["# closing:"] + h.closing))
    acc1_k = np.int64(X[i0])
    acc1_kb[i0 - acc1_at] = acc1_k
    acc1_lo = min(acc1_lo, acc1_k)
    acc1_hi = max(acc1_hi, acc1_k)
    # closing:
    if acc1_lo < 0 or acc1_hi >= acc1_n:  # 1: BINCOUNT H, X
        acc1_bad[chunk] = True
    else:
        for acc1_j in range(min(n0, (chunk + u1) * u4096) - chunk * u4096):
            acc1[np.uint64(acc1_kb[acc1_j])] += 1
    """
    a = f"acc{i + 1}"
    add = "1" if len(ops) == 1 else f"np.float64({ops[1]})"
    loop = "numba.prange" if parallel else "range"
    pre = [f"{a}_n = {out}.shape[0]  # {i + 1}: the bins recorded at capture",
           f"{a}_rows = np.zeros(({rows}, {a}_n), dtype={kind})",
           f"{a}_bad = np.zeros({rows}, dtype=np.bool_)"]
    post = [f"if {a}_bad.any():", f"    raise HistogramOutOfRange({i})  # {i + 1}: NumPy's ValueError, or a fused rounding",
            f"for {a}_j in {loop}({a}_n):  # {i + 1}: the chunks' bins summed", f"    {a}_s = {a}_rows[0, {a}_j]",
            f"    for {a}_c in range(1, {a}_rows.shape[0]):", f"        {a}_s += {a}_rows[{a}_c, {a}_j]",
            f"    {out}[{a}_j] = {a}_s"]
    if chunk is None:
        return HistogramLines(
            pre=pre, opening=[f"{a} = {a}_rows[{slot}]"],
            body=[f"{a}_k = np.int64({ops[0]})", f"if {a}_k < 0 or {a}_k >= {a}_n:{comment}",
                  f"    {a}_bad[{slot}] = True", "else:", f"    {a}[{a}_k] += {add}"],
            post=post)
    at = f"{chunk.index} - {a}_at"
    weighted = len(ops) > 1
    opening = [f"{a} = {a}_rows[{slot}]", f"{a}_at = {chunk.start}",
               f"{a}_kb = np.empty({chunk.size}, dtype=np.int64)  # {i + 1}: the chunk's bins",
               f"{a}_lo = np.int64(0)", f"{a}_hi = np.int64(0)"]
    body = [f"{a}_k = np.int64({ops[0]})", f"{a}_kb[{at}] = {a}_k"]
    if weighted:
        opening.append(f"{a}_wb = np.empty({chunk.size}, dtype=np.float64)  # {i + 1}: and weights")
        body.append(f"{a}_wb[{at}] = {add}")
        add = f"{a}_wb[{a}_j]"
    body += [f"{a}_lo = min({a}_lo, {a}_k)", f"{a}_hi = max({a}_hi, {a}_k)"]
    closing = [f"if {a}_lo < 0 or {a}_hi >= {a}_n:{comment}", f"    {a}_bad[{slot}] = True", "else:",
               f"    for {a}_j in range({chunk.count}):", f"        {a}[np.uint64({a}_kb[{a}_j])] += {add}"]
    return HistogramLines(pre=pre, opening=opening, body=body, post=post, closing=closing)

