"""What a block's kernel is, before any source is written: its :class:`KernelLayout`.

:func:`get_kernel_layout` decides whether a block of fused instructions can be one
compiled kernel (else it raises :class:`Unsupported` with the reason) and analyses it: the
iteration space and loop nest (which axis runs in parallel, and how: a plain ``prange``,
chunks, ranges of axis 0, BLAS tiles, two passes), the reductions and the form each
accumulates in, the scans, the filters (:class:`FilterPlan`), the contraction
(:func:`fusionlab.backend.numba.contract.contraction_plan`), the arrays it contracts, and its
arguments in order with the coordinates each view is indexed in. The layout is frozen and
hashable; :func:`fusionlab.backend.numba.codegen.emit_kernel` writes the source from it alone, as
Futhark's fusion decides (TryFusion) before it composes (Composing).

Examples
--------
>>> from fusionlab import parse
>>> p = parse('''
... ARRAY A float64[100, 8]
... ARRAY T float64[100, 8]
... ARRAY S float64[100]
... MULTIPLY T, A, A
... ADD_REDUCE S, T, axis=1
... DEL T
... ''')
>>> lay = get_kernel_layout(p, [0, 1, 2])
>>> lay.domain, lay.outer, lay.mode, lay.contracted
((100, 8), 0, 'plain', ('T',))
>>> [(r.index, r.form.value, r.axis) for r in lay.reductions]
[(1, 'inner', 1)]
>>> [v.base.name for v in lay.arguments]
['A', 'S']
"""

from __future__ import annotations

import keyword
import math
import re
from dataclasses import dataclass
from enum import Enum
from functools import cached_property
from typing import Any, Callable, Sequence

import numpy as np

from fusionlab.ir.bytecode import Instruction, Opcode, OpFamily, Program, View
from fusionlab.analysis.capabilities import Refused, refusal
from fusionlab.backend.numba.capabilities import NUMBA
from fusionlab.backend.numba.contract import TILE_ROWS, ContractionPlan, LibraryKernel, contraction_plan
from fusionlab.costs import access_info
from fusionlab.analysis.filters import filter_folds, is_row_filter, loop_domains, reduction_axis

__all__ = ["KernelLayout", "KernelNames", "Reduction", "ReductionForm", "Scan", "Unsupported", "NothingToCompute",
           "LibraryCall", "CannotCompile", "IllegalBlock", "FilterPlan",
           "CHUNK", "SPLIT", "SPLIT_ROWS", "SPLIT_ELEMENTS", "split_ranges", "split_ranges_source", "get_kernel_layout", "filter_plan", "gather_sources", "display_names",
           "canonical_names", "safe_name"]

#: elements per chunk of a one-dimensional parallel loop with partial results
CHUNK = 4096
#: ranges the first axis is split in when every axis is reduced (partial results per range)
SPLIT = 64
#: rows a split range has at least (fewer ranges for fewer rows), unless the input is large
#: enough for more: each range fills, and the combining pass reads, a row of partial
#: results, and takes its rows four at a time (lanes, row lanes) with the rest one
#: by one. A 1000 x 2000 row-and-column sum on one thread: 0.73 ms in 64 ranges (16 rows a
#: range: 1 MB of partial rows, a quarter of the rows outside the lanes), 0.61 ms in 30;
#: NumPy's two sums 1.20 ms
SPLIT_ROWS = 32
#: elements that justify a range of their own when rows are few (8 x 1,000,000: 8 ranges)
SPLIT_ELEMENTS = 65536


def split_ranges(rows: int, elements: int, compacting: bool = False) -> int:
    """The ranges a split kernel cuts its ``rows`` (axis 0) in, for ``elements`` in all: at
    most :data:`SPLIT` and ``rows``; at least :data:`SPLIT_ROWS` rows a range unless the
    elements allow more (:data:`SPLIT_ELEMENTS` each). A compacting (two-pass) kernel keeps
    a range per row up to :data:`SPLIT`. The kernel computes the same from its extents.

    >>> split_ranges(4000, 16_000_000), split_ranges(1000, 2_000_000), split_ranges(8, 8_000_000)
    (64, 31, 8)
    >>> split_ranges(300, 60_000), split_ranges(20, 2000), split_ranges(20, 2000, compacting=True)
    (9, 1, 20)
    """
    if compacting:
        return min(rows, SPLIT)
    return min(rows, SPLIT, max(1, rows // SPLIT_ROWS, elements // SPLIT_ELEMENTS))


def split_ranges_source(layout: "KernelLayout", extents: Sequence[str], u: Callable[[int], str]) -> str:
    """:func:`split_ranges` as the kernel computes it from its ``extents`` (``u`` names an
    unsigned constant).

    >>> from fusionlab import parse
    >>> split_ranges_source(get_kernel_layout(parse("ARRAY x float64[300, 20]\\nARRAY c float64[20]\\n"
    ...     "ADD_REDUCE c, x, axis=0"), [0]), ["n0", "n1"], lambda k: f"u{k}")
    'min(n0, u64, max(u1, n0 // u32, n0 * n1 // u65536))'
    """
    if layout.two_pass or layout.filters is not None:
        return f"min({extents[0]}, {u(SPLIT)})"
    return f"min({extents[0]}, {u(SPLIT)}, max({u(1)}, {extents[0]} // {u(SPLIT_ROWS)}, " \
        f"{' * '.join(extents)} // {u(SPLIT_ELEMENTS)}))"

_RESERVED = {"chunk", "np", "numba", "kernel", "range", "True", "False", "None", "fill", "sum", "prod", "max", "min",
             "all", "any", "full", "sp", "nsp", "nch", "tile", "rb", "_vsin", "_vcos", "_trig_far"}

#: a view in its base's coordinates: per base axis, the iteration axis moving along it (or
#: None), the step and the start
Coords = tuple[tuple[int | None, int, int], ...]


class Unsupported(Exception):
    """Why a block is run by NumPy instead of a compiled kernel."""


class NothingToCompute(Unsupported):
    """A block of no computing instruction (SYNCs, DELs): there is no kernel to build."""


class LibraryCall(Unsupported):
    """A block that is one contraction: NumPy's own call (BLAS for ``@``) is its kernel,
    the fastest there is for it, not a fallback (:mod:`fusionlab.backend.numba.contract`)."""


class CannotCompile(Unsupported):
    """What the backend cannot compile: :func:`fusionlab.analysis.capabilities.refusal`'s
    answer for :data:`~fusionlab.backend.numba.capabilities.NUMBA`, typed in ``refused``
    (the layout decides none of it itself)."""

    def __init__(self, refused: Refused) -> None:
        super().__init__(refused.detail)
        self.refused = refused


class IllegalBlock(Unsupported):
    """A block the WSP graph forbids (a rule of :func:`fusionlab.analysis.legality.fusion_conflict`,
    e.g. ``Conflict.SHAPE``): an internal invariant broken when a partitioner formed it. Still
    an :class:`Unsupported`, not an ``AssertionError``: the explorer and the tests hand the
    layout blocks no graph checked, and ``python -O`` would strip an assertion."""


def safe_name(name: str) -> str:
    """A Python identifier for an array name that cannot clash with the kernel's own.

    >>> safe_name("A"), safe_name("i0"), safe_name("sum"), safe_name("x_row"), safe_name("c0")
    ('A', 'i0_', 'sum_', 'x_row_', 'c0_')
    """
    # c0, c1, ...: a kernel's float constants (codegen's ``operand``): an array named so was
    # given twice as an argument ("duplicate argument 'c0'"), and its block ran as NumPy
    if keyword.iskeyword(name) or name in _RESERVED or name[:1] in "injkrc" and name[1:].isdigit() \
            or name.startswith(("acc", "rnd")) or re.search(r"_(row|w)\w*$", name) or re.fullmatch(r"u\d+", name) \
            or "_" in name and name.rsplit("_", 1)[1].isdigit():
        return f"{name}_"
    return name


class ReductionForm(Enum):
    """How a reduction accumulates in the loop nest."""

    #: its output freed unread: not computed, never allocated (contracted)
    DEAD = "dead"
    #: a zero-dimensional space: the reduction of one element is that element
    ELEMENT = "element"
    #: over everything: a scalar per outer index (or chunk, or range of axis 0), combined after the loop
    PARTIALS = "partials"
    #: over axis 0 split in ranges: a partial output per range, combined after the loop
    SPLIT = "split"
    #: over the innermost loop's axis: a scalar stored once after that loop
    INNER = "inner"
    #: over another axis: accumulated in its output, filled with the identity first
    AXIS = "axis"


@dataclass(frozen=True)
class Reduction:
    """One reduction of a block: its instruction, its form, its axis (None: all of them) and
    the dtype it accumulates in (its output's)."""

    index: int
    form: ReductionForm
    axis: int | None
    dtype: str


@dataclass(frozen=True)
class Scan:
    """One scan of a block: its instruction and the dtype it accumulates in (NumPy's
    ``ufunc.accumulate`` of its input's dtype)."""

    index: int
    dtype: str


# --------------------------------------------------------------------------- filters (issue 14; 002)
# A block with a COMPRESS or a filter-fold loops over the filter's input domain
# (``filters.loop_domains``). A filter sharing the block keeps each element and its mask
# bit in locals; a filter-fold in the block folds the element under the mask bit (its
# output contracted when nothing else uses it); a filter whose output is used elsewhere
# writes it compacted (a running count; in parallel, two passes). A filter-fold
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
    #: COMPRESS instructions whose output the kernel writes (compaction: two passes in
    #: parallel, a running count in C order serially)
    compacting: tuple[int, ...]
    #: the masks of the block's row selections, indexed by the leading loop indices
    row_masks: frozenset[View] = frozenset()

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
            raise IllegalBlock(f"{program[c].opcode.name} {name} is used in its own loop by another instruction "
                              "than a reduction of all of it")
        if name in new and name in freed:
            contracted.add(name)
        else:
            compacting.append(c)
    # no other instruction uses a row mask (refusal: Capabilities.row_mask_users)
    rows = frozenset(program[c].views_in[1] for c in filters if is_row_filter(program[c]))
    return FilterPlan(tuple(loop_domains(program)), fused, guarded, frozenset(contracted), tuple(compacting), rows)


# --------------------------------------------------------------------------- gathers
# A GATHER is one element of its output per iteration, like a map, read from its source at
# the positions its index arrays hold: the source is an argument of its own (never indexed
# in the loop's coordinates, never contracted), complete before the kernel starts (the WSP
# graph's GATHER_SOURCE edges keep its writers out). Indices are valid: capture indexed
# with NumPy first, which raised IndexError for any other (docs/filters-gathers-histograms.md, "Gathers").


def gather_sources(program: Program, compute: Sequence[int]) -> frozenset[str]:
    """The bases the block's gathers read from; :class:`Unsupported` when the block also
    writes a gathered view (:class:`IllegalBlock`: see ``Conflict.GATHER_SOURCE``)."""
    sources = [program[i].views_in[0] for i in compute if program[i].opcode in OpFamily.GATHER]
    for i in compute:
        for v in program[i].writes():
            if any(v.overlaps(s) for s in sources):
                raise IllegalBlock(f"{v.base.name} is gathered from and written in one block")
    return frozenset(s.base.name for s in sources)


# --------------------------------------------------------------------------- the layout


@dataclass(frozen=True)
class KernelLayout:
    """Everything a block's kernel source is written from (see the module's docstring).

    Loop nest: ``domain`` is the iteration space; ``outer`` the axis of the parallel loop
    (None: every axis reduced, with no split); ``loop_order`` the axes of the plain ``for``
    loops after the split, chunk or tile loop that may open the nest, the innermost last;
    ``split`` (ranges of axis 0 with partial results), ``chunked`` (chunks of a
    one-dimensional loop), ``two_pass`` (compaction in two passes over chunks), ``tiled``
    (blocks of rows of a BLAS product), ``rows`` (a row of each argument taken per parallel
    iteration) say how it runs. A one-dimensional scan runs in chunks, in two passes
    (``scan_feeders`` are its maps; ``stored_scan``: the first pass stores each chunk's local
    scan in the scan's output).
    """

    block: tuple[int, ...]
    #: the block's instructions, parallel to ``block``
    instructions: tuple[Instruction, ...]
    domain: tuple[int, ...]
    parallel: bool
    outer: int | None
    loop_order: tuple[int, ...]
    innermost: int | None
    scan_axis: int | None
    reduced_axes: frozenset[int]
    split: bool
    chunked: bool
    two_pass: bool
    tiled: bool
    rows: bool
    reductions: tuple[Reduction, ...]
    scans: tuple[Scan, ...]
    scan_feeders: frozenset[int]
    stored_scan: bool
    filters: FilterPlan | None
    contraction: ContractionPlan | None
    #: bases never allocated, sorted by name
    contracted: tuple[str, ...]
    #: the views the caller passes, in the kernel's parameter order
    arguments: tuple[View, ...]
    #: every other view of the block: its argument (an index into ``arguments``) and its
    #: coordinates in that argument (None: the argument is the view itself), in first use
    views: tuple[tuple[View, int, Coords | None], ...]
    #: views whose element lives in a local, stored once at the body's end
    promoted: frozenset[View]
    #: recorded random draws' keys, passed after the views
    randoms: tuple[int, ...]

    @property
    def rank(self) -> int:
        """The iteration space's number of axes."""
        return len(self.domain)

    @property
    def mode(self) -> str:
        """How the parallel loop runs: ``serial``, ``plain``, ``chunked``, ``split``, ``tiled``,
        ``two-pass`` or ``scan-chunks``."""
        if not self.parallel:
            return "serial"
        return "two-pass" if self.two_pass else "chunked" if self.chunked else "split" if self.split else \
            "tiled" if self.tiled else "scan-chunks" if self.scans and self.rank == 1 else "plain"

    def instruction(self, i: int) -> Instruction:
        """Instruction ``i`` of the program (one of the block's)."""
        return self._by_index[i]

    @cached_property
    def _by_index(self) -> dict[int, Instruction]:
        return dict(zip(self.block, self.instructions))

    @cached_property
    def slot(self) -> dict[View, tuple[int, Coords | None]]:
        """Each non-contracted view's argument index and coordinates."""
        return {v: (k, c) for v, k, c in self.views}

    @property
    def full_reductions(self) -> tuple[int, ...]:
        """The reductions over everything (the output a scalar)."""
        return tuple(r.index for r in self.reductions if r.form is ReductionForm.PARTIALS)

    @property
    def parallel_iterations(self) -> int:
        """Iterations of the ``prange`` loop (0: a serial kernel)."""
        if not self.parallel:
            return 0
        n = self.domain[0]
        if self.chunked or self.scans and self.rank == 1:
            return -(-n // CHUNK)
        return split_ranges(n, math.prod(self.domain), self.two_pass or self.filters is not None) if self.split else -(-n // TILE_ROWS) if self.tiled else \
            self.domain[self.outer]  # type: ignore[index]

    @property
    def library_blas(self) -> bool:
        """Whether the kernel calls BLAS (``np.dot`` on tiles of a contraction)."""
        return self.tiled or self.contraction is not None and self.contraction.batch_tile


@dataclass(frozen=True)
class KernelNames:
    """The names a kernel's source gives its arguments (parallel to ``arguments``) and its
    contracted arrays' locals (parallel to ``contracted``)."""

    arguments: tuple[str, ...]
    contracted: tuple[str, ...]


def display_names(layout: KernelLayout) -> KernelNames:
    """The program's own array names, made safe and distinct (``A``, ``A_1`` for a second
    view of ``A`` passed on its own).

    >>> from fusionlab import parse
    >>> p = parse("ARRAY A float64[4]\\nARRAY sum float64[4]\\nADD sum, A, A")
    >>> display_names(get_kernel_layout(p, [0]))
    KernelNames(arguments=('A', 'sum_'), contracted=())
    """
    local = tuple(safe_name(c) for c in layout.contracted)
    used: set[str] = set()
    names = []
    for v in layout.arguments:
        base = safe_name(v.base.name)
        name, k = base, 1
        while name in used or name in local:
            name, k = f"{base}_{k}", k + 1
        used.add(name)
        names.append(name)
    return KernelNames(tuple(names), local)


def canonical_names(layout: KernelLayout) -> KernelNames:
    """Names that depend on positions only (``a0, a1, ...``; ``c0, ...``): the source written
    with them is the kernel's signature (blocks equal up to names share one kernel).

    >>> from fusionlab import parse
    >>> p = parse("ARRAY A float64[4]\\nARRAY B float64[4]\\nADD B, A, A")
    >>> canonical_names(get_kernel_layout(p, [0]))
    KernelNames(arguments=('a0', 'a1'), contracted=())
    """
    return KernelNames(tuple(f"a{k}" for k in range(len(layout.arguments))),
                       tuple(f"c{k}" for k in range(len(layout.contracted))))


def get_kernel_layout(program: Program, block: Sequence[int], parallel: bool = True,
                      access: tuple[Sequence[Any], frozenset[str]] | None = None) -> KernelLayout:
    """The layout of ``block``'s kernel (0-based instruction indices), or raise
    :class:`Unsupported` with the reason the block cannot be one kernel.

    ``access`` is ``costs.access_info(program)`` when the caller has it: it walks the whole
    program, so a caller analysing every block passes it once.

    Examples
    --------
    >>> from fusionlab import parse
    >>> p = parse('''
    ... ARRAY X float64[5000]
    ... ARRAY S float64[]
    ... ADD_REDUCE S, X
    ... ''')
    >>> lay = get_kernel_layout(p, [0])
    >>> lay.mode, lay.parallel_iterations, [r.form.value for r in lay.reductions]
    ('chunked', 2, ['partials'])
    >>> get_kernel_layout(parse("ARRAY X float16[4]\\nNEGATIVE X, X"), [0])
    Traceback (most recent call last):
    ...
    fusionlab.backend.numba.layout.CannotCompile: float16 (X) has no Numba arithmetic: NumPy runs it
    """
    block = sorted(block)
    acc, synced = access if access is not None else access_info(program)
    compute = [i for i in block if program[i].opcode not in OpFamily.SYSTEM]
    if not compute:
        raise NothingToCompute("no computing instruction")
    try:
        cplan = contraction_plan(program, compute)   # a contraction with its epilogue
    except LibraryKernel as exc:
        raise LibraryCall(str(exc)) from None
    except ValueError as exc:   # CONTRACTION_PAIR, _EPILOGUE or _OPERAND forbid the block
        raise IllegalBlock(str(exc)) from None
    refused = refusal(NUMBA, program, compute)   # what Numba cannot compile: stated once, not here
    if refused is not None:
        raise CannotCompile(refused)
    gathered = gather_sources(program, compute)
    if cplan is not None:   # its operands are indexed by the summed letters too, not the loop alone
        gathered |= {v.base.name for v in program[cplan.index].views_in}
    new = set().union(*(acc[i].new for i in block))
    freed = set().union(*(acc[i].deleted for i in block)) - synced
    plan = filter_plan(program, block, compute, new, freed)   # filters: see FilterPlan
    domain = _domain(program, compute, plan)
    scans = [i for i in compute if program[i].opcode in OpFamily.SCAN]
    scan_axis = _scan_axis(program, scans, compute)
    _check_syncs(program, block)
    nest = _loop_nest(program, compute, domain, plan, scans, scan_axis, parallel, cplan)
    if plan is not None and plan.compacting and not nest["chunked"] and \
            nest["loop_order"] != tuple(range(int(nest["split"]), len(domain))):
        # a selection is written at a running count of its elements: each range in C order
        # (a scan's sequential axis takes the loop out of C order: Conflict.SCAN_FILTER keeps
        # scans out of a filter's block; tests/test_capabilities.py's property watches the rest)
        raise IllegalBlock("a selection compacted in a loop not in C order")
    contracted = _contracted(program, compute, domain, new, freed, plan)
    arguments, views = _arguments(program, compute, len(domain), contracted, gathered,
                                  plan.row_masks if plan is not None else frozenset())
    promoted = _promoted(program, compute, contracted, bool(scans))
    scan_list = tuple(Scan(i, _scan_dtype(program[i]).name) for i in scans)
    feeders = _scan_feeders(program, set(scans), block) if scans and len(domain) == 1 else frozenset()
    stored = bool(feeders) and _stored_scans(program, scan_list, block, feeders, contracted, promoted)
    randoms = tuple(program[i].attr("key") for i in compute if program[i].opcode is Opcode.RANDOM)
    return KernelLayout(
        tuple(block), tuple(program[i] for i in block), domain, scans=scan_list, scan_feeders=frozenset(feeders),
        stored_scan=stored, filters=plan, contraction=cplan, contracted=tuple(sorted(contracted)),
        arguments=arguments, views=views, promoted=promoted, randoms=randoms,
        reductions=_reductions(program, compute, nest, contracted, len(domain)), **nest)


def _check_syncs(program: Program, block: Sequence[int]) -> None:
    """:class:`IllegalBlock` for a SYNC between two writes of its base inside the block
    (``Conflict.SYNC_THEN_WRITE`` forbids it): a fused loop cannot honour it. A DEL after the
    SYNC is no write: the base is freed once the loop has stored (and so synced) it."""
    for pos, i in enumerate(block):
        if program[i].opcode is Opcode.SYNC:
            name = program[i].views_in[0].base.name
            if any(v.base.name == name for j in block[pos + 1:] if program[j].opcode is not Opcode.DEL
                   for v in program[j].writes()):
                raise IllegalBlock(f"SYNC {name} sits between writes of {name}")


def _domain(program: Program, compute: Sequence[int], plan: FilterPlan | None) -> tuple[int, ...]:
    """The block's iteration space, shared by every instruction (an empty one that would
    leave an output unset :func:`~fusionlab.analysis.capabilities.refusal` refused)."""
    loop_domain = (lambda i: program[i].domain) if plan is None else plan.domain_of
    domain = loop_domain(compute[0])
    # only SYSTEM and OPAQUE instructions have none: left out of compute, refused
    assert domain is not None, "a computing instruction without an iteration space"
    if any(loop_domain(i) != domain for i in compute):   # Conflict.SHAPE forbids it
        raise IllegalBlock("instructions of different iteration shapes")
    return tuple(domain)


def _scan_dtype(ins: Instruction) -> np.dtype:
    """The dtype a scan accumulates in: NumPy's ``ufunc.accumulate`` of its input's dtype
    (int8 sums wrap in int8; ``logical_or`` of floats is a bool)."""
    return ins.opcode.ufunc.accumulate(np.zeros(1, dtype=ins.views_in[0].dtype)).dtype


def _scan_axis(program: Program, scans: Sequence[int], compute: Sequence[int]) -> int | None:
    """The axis of the block's scans (one loop nest has one sequential axis), or None when
    there are none; raises :class:`IllegalBlock` for what the WSP graph forbids
    (``Conflict.SCAN_AXES`` and ``SCAN_REDUCTION``, since Numba's capabilities allow neither)."""
    if not scans:
        return None
    axes = set()
    for i in scans:
        ins = program[i]
        axis = ins.attr("axis")
        axes.add(0 if axis is None else axis % ins.outputs[0].ndim)
    if len(axes) > 1:
        raise IllegalBlock("scans along different axes")
    if any(program[i].opcode in OpFamily.REDUCTION for i in compute):
        raise IllegalBlock("a scan and a reduction in one block")
    return axes.pop()


def _loop_nest(program: Program, compute: Sequence[int], domain: tuple[int, ...], plan: FilterPlan | None,
               scans: Sequence[int], scan_axis: int | None, parallel: bool,
               cplan: ContractionPlan | None) -> dict[str, Any]:
    """The loop nest's fields of the layout (see :class:`KernelLayout`)."""
    rank = len(domain)
    # a zero-dimensional space is straight-line code: no loop, nothing to run in parallel
    # compaction: two passes over chunks (one dimension) or ranges of rows (more), each
    # compacting into its own slice of a buffer; serial, a running count in C order
    compacting = plan is not None and bool(plan.compacting)
    parallel = parallel and rank > 0
    histograms = [i for i in compute if program[i].opcode in OpFamily.HISTOGRAM]
    # bins per chunk no larger than the chunk: more bins than values per chunk cost more to
    # zero and sum than the counting saves, so such a histogram counts serially, once
    parallel = parallel and all(program[i].outputs[0].size <= CHUNK for i in histograms)
    two_pass = parallel and compacting
    reductions = [i for i in compute if program[i].opcode in OpFamily.REDUCTION]
    axes = {i: reduction_axis(program, i) for i in reductions}
    reduced_axes = frozenset(axes[i] for i in reductions if axes[i] is not None and rank > 1)
    outer = next((a for a in range(rank) if a not in reduced_axes and a != scan_axis), None)
    full = rank > 0 and any(axes[i] is None or rank == 1 for i in reductions) or bool(histograms)
    # sibling reductions (003 eq. 34) that leave no unreduced axis to run in parallel
    # first, or a full one beside one over axis 0: the first axis is split in ranges, each
    # with its own partial results, combined after the loop (one pass over the input). With
    # enough rows (partial results at most a quarter of the input) an axis-0 reduction
    # splits too: rows in memory order instead of a strided walk down each column (a
    # 2000 x 2000 sum and sum of squares over axis 0: 30 ms split, 63 ms by columns, here)
    split = rank >= 2 and (0 in reduced_axes and (full or outer is None or domain[0] >= 4 * SPLIT) or two_pass)
    if compacting and not parallel:   # a running count of the selected elements: the loop in C order
        split, outer = False, 0
    if scans and rank == 1 or split:
        outer = 0   # a one-dimensional scan: chunks in parallel, two passes
    # a one-dimensional space with a full reduction runs in chunks: a partial result per
    # chunk keeps the parallel reduction's memory small
    chunked = rank == 1 and (full or two_pass)
    order = [outer] + [a for a in range(rank) if a != outer] if rank else []
    # the innermost loop's axis: a reduction over it accumulates in a scalar
    innermost = order[-1] if rank >= 2 and not scans else None
    if split:
        order = order[1:]
    if chunked or scans and rank == 1:
        order = []
    elif scans:   # the scan axis innermost, its accumulators restarted for each line
        order = [a for a in order if a != scan_axis] + [scan_axis]
    return dict(parallel=parallel, outer=outer, loop_order=tuple(order), innermost=innermost, scan_axis=scan_axis,
                reduced_axes=reduced_axes, split=split, chunked=chunked, two_pass=two_pass,
                tiled=cplan is not None and cplan.tile, rows=rank >= 2 and outer == 0 and not split)


def _reductions(program: Program, compute: Sequence[int], nest: dict[str, Any], contracted: set[str],
                rank: int) -> tuple[Reduction, ...]:
    """Each reduction of the block and the form it accumulates in."""
    out = []
    for i in compute:
        ins = program[i]
        if ins.opcode not in OpFamily.REDUCTION:
            continue
        axis = reduction_axis(program, i)
        axis = None if axis is None or rank == 0 else axis
        if ins.outputs[0].base.name in contracted:
            form = ReductionForm.DEAD
        elif rank == 0:
            form = ReductionForm.ELEMENT
        elif axis is None or rank == 1:
            form = ReductionForm.PARTIALS
        elif nest["split"] and axis == 0:
            form = ReductionForm.SPLIT
        elif axis == nest["innermost"]:
            form = ReductionForm.INNER
        else:
            form = ReductionForm.AXIS
        out.append(Reduction(i, form, axis, ins.outputs[0].dtype))
    return tuple(out)


def _contracted(program: Program, compute: Sequence[int], domain: tuple[int, ...], new: set[str], freed: set[str],
                plan: FilterPlan | None) -> set[str]:
    """The bases never allocated: created and freed here, never synced, accessed only
    through one view of the iteration space's shape; and dead reductions."""
    views_of: dict[str, set[View]] = {}
    for i in compute:
        for v in program[i].reads() + program[i].writes():
            views_of.setdefault(v.base.name, set()).add(v)
    contracted = {
        name for name in new & freed
        if len(views_of.get(name, ())) == 1 and next(iter(views_of[name])).shape == domain
        and not any(program[i].opcode in OpFamily.REDUCTION | OpFamily.HISTOGRAM
                    and program[i].outputs[0].base.name == name for i in compute)
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
    return contracted


def _base_coords(v: View, rank: int, leading: bool = False) -> Coords | None:
    """``v`` in its base's own coordinates: per base axis, the iteration axis that moves
    along it (or None), the step, and the start — or None when the view is not a product of
    per-axis ranges of its base (a reshaped view, a zero-dimensional one). A view aligns
    with the loop's last axes (as NumPy broadcasts), a ``leading`` one (a row mask) with
    its first."""
    base = v.base
    if v.ndim == 0 or not base.shape or v.size == 0 or 0 in base.shape:   # (an empty view: its loop never runs)
        return None
    steps = [math.prod(base.shape[j + 1:]) for j in range(len(base.shape))]
    rest, starts = v.offset, []
    for st in steps:
        o, rest = divmod(rest, st)
        starts.append(o)
    out: list[tuple[int | None, int, int]] = [(None, 0, o) for o in starts]
    lead = 0 if leading else rank - v.ndim
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


def _arguments(program: Program, compute: Sequence[int], rank: int, contracted: set[str],
               gathered: frozenset[str], leading: frozenset[View] = frozenset()
               ) -> tuple[tuple[View, ...], tuple[tuple[View, int, Coords | None], ...]]:
    """The kernel's arguments, and each view's argument and coordinates in it.

    A base all of whose views here are ranges of its axes is passed once, whole (a
    C-contiguous array), and each view is indexed in the base's coordinates
    (``G[i0 + 1, i1 + 2]``): one pointer for Numba instead of one per shifted view, and a
    contiguous inner axis it can vectorise. Other bases pass each view (made by the caller)."""
    axis_outputs = {
        program[i].outputs[0].base.name for i in compute
        if program[i].opcode in OpFamily.REDUCTION and program[i].attr("axis") is not None and rank > 1
        or program[i].opcode in OpFamily.HISTOGRAM   # its bins are indexed by data, not the loop
    }
    all_views: dict[str, list[View]] = {}
    for i in compute:
        for v in program[i].views_in + program[i].outputs:
            if v.base.name not in contracted and v not in all_views.setdefault(v.base.name, []):
                all_views[v.base.name].append(v)
    coords: dict[View, Coords] = {}
    for name, views in all_views.items():
        got = {v: _base_coords(v, rank, v in leading) if v.ndim <= rank else None for v in views}
        # a gather's source is indexed by data, not the loop: passed as its own view
        if name not in axis_outputs and name not in gathered and all(c is not None for c in got.values()):
            coords.update(got)  # type: ignore[arg-type]
    args: list[View] = []
    index: dict[View, int] = {}
    slots: dict[View, tuple[int, Coords | None]] = {}
    for i in compute:
        for v in program[i].views_in + program[i].outputs:
            if v.base.name in contracted:
                continue
            key = v.base.view() if v in coords else v
            if key not in index:
                index[key] = len(args)
                args.append(key)
            slots.setdefault(v, (index[key], coords.get(v)))
    return tuple(args), tuple((v, k, c) for v, (k, c) in slots.items())


def _promoted(program: Program, compute: Sequence[int], contracted: set[str], scans: bool) -> frozenset[View]:
    """The views whose element lives in a local until the body's end, where it is stored
    once: written twice, or read after a write, or any result of a scan kernel (its first
    pass recomputes the scan's inputs without storing them). A store between loads would
    make Numba reload everything (any argument may alias it) and block vectorisation.
    Legal blocks never touch the memory of a written view through another, overlapping
    view (Def. 12), so the local is always current."""
    promote: set[View] = set()
    seen_writes: set[View] = set()
    for i in compute:
        ins = program[i]
        if ins.opcode in OpFamily.REDUCTION | OpFamily.HISTOGRAM:
            continue
        for x in ins.inputs:
            if isinstance(x, View) and x in seen_writes:
                promote.add(x)
        out = ins.outputs[0]
        if out.base.name in contracted or out.ndim == 0:
            continue
        if out in seen_writes or scans:
            promote.add(out)
        seen_writes.add(out)
    return frozenset(promote)


def _scan_feeders(program: Program, scans: set[int], block: Sequence[int]) -> set[int]:
    """The block's scans and the instructions before them whose results they read, directly
    or through others (the maps producing the scanned values)."""
    last = max(scans)
    needed = set(scans)
    for i in sorted(block, reverse=True):
        if i in needed or i > last:
            continue
        outs = program[i].outputs
        if any(o.overlaps(v) for k in needed if k > i for v in program[k].views_in for o in outs):
            needed.add(i)
    return needed


def _stored_at(program: Program, block: Sequence[int], contracted: set[str], promoted: frozenset[View]) -> set[int]:
    """The instructions whose result opens a local stored at the body's end (the first
    write of each promoted view by an element-wise instruction)."""
    seen: set[View] = set()
    out = set()
    for i in block:
        ins = program[i]
        if ins.opcode in OpFamily.SYSTEM | OpFamily.FILTER | OpFamily.REDUCTION | OpFamily.HISTOGRAM:
            continue
        v = ins.outputs[0]
        if v.base.name not in contracted and v.ndim != 0 and v in promoted and v not in seen:
            seen.add(v)
            out.add(i)
    return out


def _stored_scans(program: Program, scans: Sequence[Scan], block: Sequence[int], needed: set[int],
                  contracted: set[str], promoted: frozenset[View]) -> bool:
    """Whether the first pass can store each chunk's local scan in the scan's output, so
    that the second pass adds the carry to it instead of recomputing the maps feeding the
    scan: every scan's output is in memory in the dtype it accumulates in, and each feeding
    map's result is contracted and read by nothing the second pass runs, or stored (by the
    first pass then) and used by nothing else in the block."""
    if any(program[s.index].outputs[0].base.name in contracted or program[s.index].outputs[0].dtype != s.dtype
           for s in scans):
        return False
    indices = {s.index for s in scans}
    feeders = needed - indices
    later = [j for j in block if j not in needed]
    # pass 1 overwrites the scan's output: nothing pass 2 runs before the scan (in program
    # order) may read it (an in-place cumsum of x beside another map of the old x)
    if any(program[j].opcode not in OpFamily.SYSTEM and j < i and program[i].outputs[0].overlaps(v)
           for i in indices for j in later for v in program[j].views_in):
        return False
    stored = _stored_at(program, block, contracted, promoted)

    def alone(i: int) -> bool:   # a stored feeder's base: no other instruction of the block uses it
        name = program[i].outputs[0].base.name
        return i in stored and not any(
            v.base.name == name for j in block if j != i and program[j].opcode not in OpFamily.SYSTEM
            for v in program[j].outputs + (program[j].views_in if j not in needed else ()))

    return all(alone(i) if program[i].outputs[0].base.name not in contracted else
               not any(program[i].outputs[0].overlaps(v) for j in later for v in program[j].views_in)
               for i in feeders)
