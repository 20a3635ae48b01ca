"""Laned extreme reductions: a kernel's running minimum or maximum kept in several
accumulators, the chunk loop's body unrolled once per accumulator; and row lanes: a split
kernel's rows taken :data:`ROW_LANES` at a time, so that its reductions over axis 0 update
their row of partial results once per ``ROW_LANES`` rows (:func:`row_laned`).

A running extreme over a chunk is a chain of dependent compares: each element waits for
the last one's result, and Numba's ``np.minimum`` on floats adds branches for NaN. Written
as a select with a NaN flag (NumPy's result: NaN when any element is NaN) and kept in
:data:`LANES` accumulators, each taking every ``LANES``-th element, the chain is ``LANES``
times shorter. Minimum and maximum are exact, so splitting them changes no bit of the
result (``-0.0`` against ``0.0`` aside, whose order NumPy does not fix either).

Measured on one thread, 1,000,000 float64 values (a minimum and a maximum in one loop):
1.69 ms with ``np.minimum``, 1.00 ms as selects with a NaN flag, 0.48 ms in four lanes
(0.61 ms in eight); NumPy's ``x.min(); x.max()`` 0.54 ms.

Examples
--------
>>> from fusionlab import parse
>>> from fusionlab.backend.numba.codegen import get_kernel
>>> p = parse("ARRAY x float64[10000]\\nARRAY m float64[]\\nMINIMUM_REDUCE m, x, axis=None")
>>> src = get_kernel(p, [0]).source
>>> "acc1_l3 = acc1_x_l3 if acc1_x_l3 < acc1_l3 else acc1_l3" in src, "np.minimum(acc1, x[i0])" in src
(True, False)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from fusionlab.ir.bytecode import OPCODES, Opcode, OpFamily
from fusionlab.backend.numba.emit import np_type
from fusionlab.backend.numba.layout import CHUNK, KernelLayout, ReductionForm

__all__ = ["LANES", "laned_extreme", "laned_lines", "unrolled_chunk", "buffered_chunk", "ROW_LANES", "SplitUpdate", "row_laned",
           "combine_split_parts",
           "row_laned_lines"]

#: accumulators per laned reduction: the chunk loop's body is unrolled this many times
LANES = 4

#: reductions accumulated in lanes: a running extreme is a chain of dependent compares
_LANED = frozenset({Opcode.MINIMUM_REDUCE, Opcode.MAXIMUM_REDUCE})


def laned_extreme(layout: KernelLayout, op: Opcode, dtype: str) -> bool:
    """Whether the reduction over everything ``op`` (its output ``dtype``) accumulates in
    :data:`LANES` lanes: a float minimum or maximum in a one-dimensional chunked loop with
    no compaction, scan or contraction (whose bodies keep state across elements).

    >>> from fusionlab import parse
    >>> from fusionlab.backend.numba.layout import get_kernel_layout
    >>> p = parse("ARRAY x float64[10000]\\nARRAY m float64[]\\nMINIMUM_REDUCE m, x, axis=None")
    >>> lay = get_kernel_layout(p, [0])
    >>> laned_extreme(lay, Opcode.MINIMUM_REDUCE, "float64"), laned_extreme(lay, Opcode.ADD_REDUCE, "float64")
    (True, False)
    >>> laned_extreme(lay, Opcode.MINIMUM_REDUCE, "int64")   # integers: no NaN, no branches
    False
    """
    return (op in _LANED and np.dtype(dtype).kind == "f" and layout.chunked and layout.filters is None
            and not layout.scans and layout.contraction is None and not layout.two_pass and not layout.tiled)


def laned_lines(a: str, op: Opcode, src: str, dtype: str, slot: str, comment: str) -> tuple[list[str], list[str], list[str]]:
    """A laned reduction's lines at the top of a chunk, in the body and at the chunk's end:
    accumulator ``a`` and its NaN flag ``a_n``, a select per element, the chunk's result
    NaN when the flag is set.

    >>> opening, body, closing = laned_lines("acc2", Opcode.MAXIMUM_REDUCE, "x[i0]", "float64", "chunk", "")
    >>> body
    ['acc2_x = x[i0]', 'acc2 = acc2_x if acc2_x > acc2 else acc2', 'acc2_n |= acc2_x != acc2_x']
    >>> closing
    ['acc2_part[chunk] = np.float64(np.nan) if acc2_n else acc2']
    """
    cmp = "<" if op is Opcode.MINIMUM_REDUCE else ">"
    body = [f"{a}_x = {src}", f"{a} = {a}_x if {a}_x {cmp} {a} else {a}" + comment, f"{a}_n |= {a}_x != {a}_x"]
    return [f"{a}_n = False"], body, [f"{a}_part[{slot}] = {np_type(dtype)}(np.nan) if {a}_n else {a}"]


def unrolled_chunk(body: Sequence[str], laned: Sequence[tuple[int, Opcode, str]], n: str, i: str,
                   u: Callable[[int], str]) -> list[str]:
    """A chunk's loop (its ``body`` with the stores) unrolled :data:`LANES` times, each copy
    with its own accumulators of the ``laned`` reductions (instruction, opcode), the
    remainder in lane 0, then the lanes merged with the reduction's own combine. ``n`` is
    the loop's extent, ``i`` its index, ``u`` names an unsigned constant."""
    names = [f"acc{k + 1}" for k, _, _ in laned]
    lines = [f"acc_lo = chunk * {u(CHUNK)}", f"acc_hi = min({n}, (chunk + {u(1)}) * {u(CHUNK)})",
             f"acc_mid = acc_hi - (acc_hi - acc_lo) % {u(LANES)}"]
    lines += [f"{a}{sfx}_l{k} = {a}{sfx}" for k in range(1, LANES) for a in names for sfx in ("", "_n")]
    lines.append(f"for acc_ib in range(acc_lo, acc_mid, {u(LANES)}):")
    for k in range(LANES):
        lines.append(f"    {i} = acc_ib" + (f" + {u(k)}" if k else ""))
        copy = list(body)
        for a in names if k else ():
            copy = [re.sub(rf"\b({a}(?:_n|_x)?)\b", rf"\1_l{k}", line) for line in copy]
        lines += [f"    {line}" for line in copy]
    lines.append(f"for {i} in range(acc_mid, acc_hi):  # the remainder, in lane 0")
    lines += [f"    {line}" for line in body]
    return lines + _merged(laned, names)


def _merged(laned: Sequence[tuple[int, Opcode, str]], names: Sequence[str]) -> list[str]:
    """The lanes of each laned reduction merged into lane 0, with the reduction's combine."""
    lines = []
    for (k_ins, op, _), a in zip(laned, names):
        for k in range(1, LANES):
            lines += [f"{a} = " + OPCODES[op].combine.format(a=a, b=f"{a}_l{k}") + f"  # {k_ins + 1}: lane {k} merged",
                      f"{a}_n |= {a}_n_l{k}"]
    return lines


def buffered_chunk(body: Sequence[str], laned: Sequence[tuple[int, Opcode, str]], n: str, i: str,
                   u: Callable[[int], str]) -> list[str] | None:
    """A chunk's loop in two: the ``body`` (with the stores) without the laned selects,
    writing each laned reduction's element into a buffer of the chunk, then the lanes over
    the buffers, :data:`LANES` elements at a time. The first loop has no select chain, so
    LLVM vectorises what computes the elements (a division, a square root: scalar
    ``vdivsd`` in :func:`unrolled_chunk`'s copies); the selects then read L1. The same
    elements meet the same lanes in the same order: the result is :func:`unrolled_chunk`'s.
    None when the body only loads the elements (nothing to vectorise: the plain unrolled
    loop is faster) or a laned element is not a line of its own.

    Measured on one thread, max |(x - m) / s| over 10^6 float64: 1.33 ms unrolled (21 scalar
    divisions, none packed), 0.76 ms buffered.

    >>> body = ["t = x[i0] / s[0]", "acc2_x = t", "acc2 = acc2_x if acc2_x > acc2 else acc2",
    ...         "acc2_n |= acc2_x != acc2_x"]
    >>> lines = buffered_chunk(body, [(1, Opcode.MAXIMUM_REDUCE, "float64")], "n0", "i0", lambda k: f"u{k}")
    >>> print("\\n".join(lines[4:9]))
    for i0 in range(acc_lo, acc_hi):
        t = x[i0] / s[0]
        acc2_buf[i0 - acc_lo] = t
    acc2_l1 = acc2
    acc2_n_l1 = acc2_n
    >>> buffered_chunk(["acc2_x = x[i0]"] + body[2:], [(1, Opcode.MAXIMUM_REDUCE, "float64")], "n0", "i0",
    ...                lambda k: f"u{k}") is None
    True
    """
    names = [f"acc{k + 1}" for k, _, _ in laned]
    elements: dict[str, str] = {}
    lane_lines: list[str] = []
    rest: list[str] = []
    for line in body:
        owner = next((a for a in names if line.startswith((f"{a}_x = ", f"{a} = {a}_x if ", f"{a}_n |= "))), None)
        if owner is None:
            rest.append(line)
        elif line.startswith(f"{owner}_x = "):
            # buffered where it stood: a later line of the body may write what it reads
            elements[owner] = line[len(f"{owner}_x = "):]
            rest.append(f"{owner}_buf[{i} - acc_lo] = {elements[owner]}")
        else:
            lane_lines.append(line)
    if len(elements) != len(names) or (len(rest) == len(names) and all(re.fullmatch(rf"\w+\[{i}\]", e)
                                                                      for e in elements.values())):
        return None
    lines = [f"acc_lo = chunk * {u(CHUNK)}", f"acc_hi = min({n}, (chunk + {u(1)}) * {u(CHUNK)})",
             f"acc_mid = acc_hi - (acc_hi - acc_lo) % {u(LANES)}"]
    lines += [f"{a}_buf = np.empty({CHUNK}, dtype={np_type(dt)})  # {k + 1}: the chunk's elements"
              for (k, _, dt), a in zip(laned, names)]
    lines.append(f"for {i} in range(acc_lo, acc_hi):")
    lines += [f"    {line}" for line in rest]
    lines += [f"{a}{sfx}_l{k} = {a}{sfx}" for k in range(1, LANES) for a in names for sfx in ("", "_n")]
    lines.append(f"for acc_ib in range(acc_lo, acc_mid, {u(LANES)}):")
    for k in range(LANES):
        at = "acc_ib - acc_lo" + (f" + {u(k)}" if k else "")
        copy = [f"{a}_x = {a}_buf[{at}]" for a in names] + lane_lines
        for a in names if k else ():
            copy = [re.sub(rf"\b({a}(?:_n|_x)?)\b", rf"\1_l{k}", line) for line in copy]
        lines += [f"    {line}" for line in copy]
    lines.append("for acc_ib in range(acc_mid, acc_hi):  # the remainder, in lane 0")
    lines += [f"    {line}" for line in [f"{a}_x = {a}_buf[acc_ib - acc_lo]" for a in names] + lane_lines]
    return lines + _merged(laned, names)


# --------------------------------------------------------------------------- row lanes

def combine_split_parts(op: Opcode, a: str, out: str, extents: Sequence[str], parallel: bool, i: int) -> list[str]:
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



#: rows of a split range taken together when a kernel reduces over axis 0. Eight, not four:
#: one thread, 1000 x 2000 row and column sums, 0.39-0.42 -> 0.29-0.30 ms with a competing
#: process on the other core (0.31 -> 0.28 quiet on a hand-written copy; six rows 0.29);
#: 4000 x 4000, 5.5 -> 5.2 ms (docs/backend.md, "Row lanes and split ranges")
ROW_LANES = 8


@dataclass(frozen=True)
class SplitUpdate:
    """A reduction over axis 0 in a split kernel: its line in the body (``line``), its
    partial results ``{acc}_part``, its opcode, its element ``src`` and output dtype."""

    line: int
    acc: str
    op: Opcode
    src: str
    dtype: str
    comment: str


def row_laned(layout: KernelLayout, updates: Sequence[SplitUpdate]) -> bool:
    """Whether a split kernel (ranges of axis 0, each with its partial results) takes
    :data:`ROW_LANES` rows at once: every reduction over axis 0 then reads and writes its
    row of partial results once per ``ROW_LANES`` rows, not once per row.

    One row of partial results per range is read and written for every input row: for a
    4000 x 4000 ``x.sum(axis=0)`` that is a load and a store per element beside the input's
    load, and the 32 KB row does not stay in L1 beside the input stream (7.5 ms on one
    thread, where the input alone streams in 3.8). Four rows summed pairwise, then added
    to the partial row, take it to 5.1 ms; eight a little less (:data:`ROW_LANES`). Rows
    are independent in a kernel (overlapping views that are not identical never share
    one, :mod:`fusionlab.analysis.legality`), so only the
    order of the combining changes: pairwise, which for a float sum is what NumPy's own
    pairwise summation does along rows, and exact for minimum, maximum and integers.

    ``updates``: the kernel's unguarded reductions over axis 0. Every other reduction must
    be one over the innermost axis (a scalar per row) or dead: no arg reduction (its ties
    keep the first row: order matters), no reduction over everything, no histogram.

    >>> from fusionlab import parse
    >>> from fusionlab.backend.numba.layout import get_kernel_layout
    >>> p = parse("ARRAY x float64[400, 30]\\nARRAY c float64[30]\\nADD_REDUCE c, x, axis=0")
    >>> row_laned(get_kernel_layout(p, [0]), [SplitUpdate(0, "acc1", Opcode.ADD_REDUCE, "x[i0, i1]", "float64", "")])
    True
    >>> row_laned(get_kernel_layout(p, [0]), [])   # its update guarded (a filter's fold): not laned
    False
    """
    split = [r for r in layout.reductions if r.form is ReductionForm.SPLIT]
    ok = {ReductionForm.SPLIT, ReductionForm.INNER, ReductionForm.DEAD}
    return (bool(updates) and len(updates) == len(split) and layout.split and layout.rank >= 2
            and layout.filters is None and not layout.scans and layout.contraction is None and not layout.tiled
            and not layout.chunked and not layout.two_pass
            and all(r.form in ok and layout.instruction(r.index).opcode not in OpFamily.ARG_REDUCTION
                    for r in layout.reductions)
            and not any(ins.opcode in OpFamily.HISTOGRAM for ins in layout.instructions))


def row_laned_lines(body: Sequence[str], stores: Sequence[str], inner_open: Sequence[str],
                    inner_close: Sequence[str], updates: Sequence[SplitUpdate], inner_accs: Sequence[str],
                    idx: Sequence[str], extents: Sequence[str], order: Sequence[int],
                    u: Callable[[int], str]) -> list[str]:
    """The loops inside one split range (``sp``): its rows :data:`ROW_LANES` at a time, then
    the remaining rows one by one as before.

    Each of the ``ROW_LANES`` copies of the body has its own row index (``i0``, ``i0_r1``,
    ...) and its own accumulators of the reductions over the innermost axis
    (``inner_accs``); a split reduction's element is kept per copy and the copies' elements
    are combined pairwise before the one update of the partial results.

    >>> upd = SplitUpdate(1, "acc3", Opcode.ADD_REDUCE, "x[i0, i1]", "float64", "")
    >>> lines = row_laned_lines(["acc2 = acc2 + x[i0, i1]", "acc3_part[sp, i1] = acc3_part[sp, i1] + x[i0, i1]"],
    ...                         [], ["acc2 = np.float64(0)"], ["r[i0] = acc2"], [upd], ["acc2"],
    ...                         ["i0", "i1"], ["n0", "n1"], [1], lambda k: f"u{k}")
    >>> [x.strip() for x in lines if "acc3_part" in x]   # eight rows, then the remaining rows one by one
    ['acc3_part[sp, i1] = acc3_part[sp, i1] + (((acc3_r0 + acc3_r1) + (acc3_r2 + acc3_r3)) + \
((acc3_r4 + acc3_r5) + (acc3_r6 + acc3_r7)))', 'acc3_part[sp, i1] = acc3_part[sp, i1] + x[i0, i1]']
    >>> [x.strip() for x in lines if x.strip().startswith("r[")][:2]
    ['r[i0] = acc2', 'r[i0_r1] = acc2_r1']
    """
    n0, i0 = extents[0], idx[0]
    at = {up.line: up for up in updates}

    def copy(lines: Sequence[str], k: int) -> list[str]:
        if not k:
            return list(lines)
        out = []
        for line in lines:
            line = re.sub(rf"\b{i0}\b", f"{i0}_r{k}", line)
            for a in inner_accs:
                line = re.sub(rf"\b{a}\b", f"{a}_r{k}", line)
            out.append(line)
        return out

    def lanes_body(k: int) -> list[str]:
        out = []
        for n, line in enumerate(body):
            up = at.get(n)
            out.append(line if up is None else f"{up.acc}_r{k} = {np_type(up.dtype)}({up.src})")
        return copy(out, k) + copy(stores, k)

    lines = [f"r_lo = sp * {n0} // nsp", f"r_hi = (sp + {u(1)}) * {n0} // nsp",
             f"r_mid = r_hi - (r_hi - r_lo) % {u(ROW_LANES)}",
             f"for {i0} in range(r_lo, r_mid, {u(ROW_LANES)}):  # {ROW_LANES} rows at once (row lanes)"]
    lines += [f"    {i0}_r{k} = {i0} + {u(k)}" for k in range(1, ROW_LANES)]
    pad = "    "
    for depth, a in enumerate(order):
        if depth == len(order) - 1:
            lines += [f"{pad}{x}" for k in range(ROW_LANES) for x in copy(inner_open, k)]
        lines.append(f"{pad}for {idx[a]} in range({extents[a]}):")
        pad += "    "
    for k in range(ROW_LANES):
        lines += [f"{pad}{x}" for x in lanes_body(k)]
    for up in updates:
        combine = OPCODES[up.op].combine
        terms = [f"{up.acc}_r{k}" for k in range(ROW_LANES)]
        while len(terms) > 1:   # pairwise
            terms = [f"({combine.format(a=terms[j], b=terms[j + 1])})" for j in range(0, len(terms), 2)]
        target = body[up.line].split(" = ", 1)[0]
        lines.append(f"{pad}{target} = " + combine.format(a=target, b=terms[0]) + up.comment)
    lines += [f"{pad[:-4]}{x}" for k in range(ROW_LANES) for x in copy(inner_close, k)]
    # the remaining rows (fewer than ROW_LANES) one at a time, as without lanes
    lines.append(f"for {i0} in range(r_mid, r_hi):  # the remaining rows, one by one")
    pad = "    "
    for depth, a in enumerate(order):
        if depth == len(order) - 1:
            lines += [f"{pad}{x}" for x in inner_open]
        lines.append(f"{pad}for {idx[a]} in range({extents[a]}):")
        pad += "    "
    lines += [f"{pad}{x}" for x in list(body) + list(stores)]
    lines += [f"{pad[:-4]}{x}" for x in inner_close]
    return lines
