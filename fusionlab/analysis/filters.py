"""Filters (COMPRESS) and the reductions that fold their output: the facts the WSP graph,
the cost models' callers and the code generator share.

A COMPRESS iterates over its data (the filter's *input rate*, Robinson, Keller and
Lippmeier, 002: "different size loops"). A reduction over the whole of a filter's output
(a *filter-fold*, 002's ``filterFold``) runs in the filter's loop too: masked by the
filter's predicate when the filter shares its block, else over the compacted output
under a guard ``flat index < count`` (the count never exceeds the input's size). Its
*loop domain* is therefore the filter's input domain, not its output's recorded length;
see docs/filters-gathers-histograms.md, "Filters".

Examples
--------
>>> from fusionlab import parse
>>> p = parse('''
... ARRAY X float64[6]
... ARRAY M bool[6]
... ARRAY Y float64[3]
... ARRAY S float64[]
... GREATER M, X, 0
... COMPRESS Y, X, M
... ADD_REDUCE S, Y
... ''')
>>> filter_folds(p)
{2: 1}
>>> loop_domains(p)
[(6,), (6,), (6,)]
"""

from __future__ import annotations

from fusionlab.ir.bytecode import Instruction, OpFamily, Program

__all__ = ["filter_folds", "loop_domains", "filter_readers", "reduction_axis", "is_row_filter"]


def filter_folds(program: Program) -> dict[int, int]:
    """Each filter-fold reduction (0-based) mapped to the COMPRESS whose output it folds.

    A filter-fold reduces the whole output view of the last COMPRESS that wrote its input
    base over its first axis (``axis`` None or 0: every element of a 1-D output, the rows
    of a row selection) or over everything. Kept on the (immutable) program: the code
    generator asks once per block."""
    cached = program.__dict__.get("_filter_folds")
    if cached is not None:
        return cached
    last_filter: dict[str, int] = {}
    folds: dict[int, int] = {}
    for i, ins in enumerate(program):
        # an arg reduction's index is its input's, which a fold's compacted stream does not have
        if ins.opcode in OpFamily.REDUCTION - OpFamily.ARG_REDUCTION:
            (src,) = ins.views_in
            c = last_filter.get(src.base.name)
            axis = ins.attr("axis")
            # rows selected by a mask of several axes fold over all of them: not one loop axis
            if c is not None and src == program[c].outputs[0] and (axis is None or axis % src.ndim == 0) \
                    and program[c].views_in[1].ndim in (1, program[c].views_in[0].ndim):
                folds[i] = c
        for v in ins.writes():
            if ins.opcode in OpFamily.FILTER:
                last_filter[v.base.name] = i
            else:
                last_filter.pop(v.base.name, None)
    object.__setattr__(program, "_filter_folds", folds)
    return folds


def loop_domains(program: Program) -> list[tuple[int, ...] | None]:
    """The iteration domain of each instruction's loop: :attr:`Instruction.domain`, except
    that a filter-fold runs over its filter's input domain."""
    domains = [ins.domain for ins in program]
    for r, c in filter_folds(program).items():
        domains[r] = program[c].domain
    return domains


def reduction_axis(program: Program, i: int) -> int | None:
    """The axis of its loop domain (:func:`loop_domains`) that reduction ``i`` reduces
    (``None``: all of them). A filter-fold of a row selection folds the rows, axis 0 of its
    filter's data; one of an element selection (a 1-D output) folds every element, whatever
    the data's rank.

    >>> from fusionlab import parse
    >>> p = parse('''
    ... ARRAY X float64[4,3]
    ... ARRAY M bool[4]
    ... ARRAY Y float64[2,3]
    ... ARRAY S float64[3]
    ... COMPRESS Y, X, M
    ... ADD_REDUCE S, Y, axis=0
    ... ''')
    >>> reduction_axis(p, 1), loop_domains(p)[1]
    (0, (4, 3))
    """
    ins = program[i]
    axis = ins.attr("axis")
    c = filter_folds(program).get(i)
    if axis is None or c is not None and program[c].outputs[0].ndim == 1:
        return None
    return axis % ins.views_in[0].ndim


def is_row_filter(ins: Instruction) -> bool:
    """Whether ``ins`` selects rows (a COMPRESS whose mask covers its data's leading axes
    only): a loop over the data indexes the mask by the leading loop indices, not, as NumPy
    broadcasts, by the trailing ones."""
    return ins.opcode in OpFamily.FILTER and ins.views_in[1].ndim < ins.views_in[0].ndim


def filter_readers(program: Program) -> dict[int, list[int]]:
    """For each COMPRESS, the other computing instructions that access its output base and
    are not filter-folds of it: they may not share its loop (the output is written first)."""
    folds = filter_folds(program)
    out: dict[int, list[int]] = {}
    by_base: dict[str, list[int]] = {}
    for i, ins in enumerate(program):
        if ins.opcode not in OpFamily.SYSTEM:
            for name in {v.base.name for v in ins.reads() + ins.writes()}:
                by_base.setdefault(name, []).append(i)
    for c, ins in enumerate(program):
        if ins.opcode in OpFamily.FILTER:
            users = by_base.get(ins.outputs[0].base.name, [])
            out[c] = [j for j in users if j != c and folds.get(j) != c]
    return out
