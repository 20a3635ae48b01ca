"""Filters (COMPRESS) and the reductions that fold their output: the facts the WSP graph,
the cost models' callers and the code generator share.

A COMPRESS iterates over its data (the filter's *input rate*, Robinson, Keller and
Lippmeier, 002: "different size loops"). A reduction over the whole of a filter's output
(a *filter-fold*, 002's ``filterFold``) runs in the filter's loop too: masked by the
filter's predicate when the filter shares its block, else over the compacted output
under a guard ``flat index < count`` (the count never exceeds the input's size). Its
*loop domain* is therefore the filter's input domain, not its output's recorded length;
see docs/semantics.md, "Filters".

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

from .bytecode import OpFamily, Program

__all__ = ["filter_folds", "loop_domains", "filter_readers"]


def filter_folds(program: Program) -> dict[int, int]:
    """Each filter-fold reduction (0-based) mapped to the COMPRESS whose output it folds.

    A filter-fold reduces the whole output view of the last COMPRESS that wrote its input
    base (a 1-D view, so ``axis`` is None or 0). Kept on the (immutable) program: the
    code generator asks once per block."""
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
            if c is not None and src == program[c].outputs[0] and ins.attr("axis") in (None, 0):
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
