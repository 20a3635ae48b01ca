"""Split by iteration shape, solve each shape apart, join, and check (the Bohrium model).

Instructions of different iteration shapes never share a block (a fuse-preventing edge), so
every block of a legal partition holds one shape's instructions plus system instructions
(DEL, SYNC: no shape, no reads or writes of their own). Let the *class* problem of a shape
be its instructions with the DELs and SYNCs of the bases they touch, in program order. Under
the Bohrium model a block's cost is the external traffic of its own instructions, and a
system instruction only excuses writes (DEL) or keeps a base live (SYNC) in the block that
holds it; so for every legal partition ``P`` the classes' restrictions of ``P`` cost exactly
``cost(P)`` in total, and each restriction is legal in its class (a cycle there would be a
cycle of ``P``; a class's fuse-preventing pairs are checked to be the whole graph's).
Hence the sum of the classes' optima is a lower bound on the optimum. The classes' optimal
partitions are joined (a DEL kept by two classes goes to the first block that uses it); the
join, when legal and of that cost, is an optimum. When it is not, the bound stands and the
caller searches the whole program.
"""

from __future__ import annotations

from typing import Any, Callable

from fusionlab.support.budget import Budget
from fusionlab.ir.bytecode import OpFamily, Program
from fusionlab.costs import Bohrium, graph_accesses
from fusionlab.analysis.legality import conflict_masks
from fusionlab.analysis.wsp import Conflict, WSPGraph, bit_indices
from fusionlab.partition.separation import separated
from fusionlab.partition._common import Context, setup
from fusionlab.partition.result import PartitionResult

Solver = Callable[[Context, Budget], PartitionResult]


def shape_classes(ctx: Context) -> list[list[int]]:
    """Per iteration shape, its instructions and the system instructions of the bases they
    touch (a DEL or SYNC may be in several); empty when the split does not apply (not the
    Bohrium model, an opaque instruction, fewer than two shapes, or one shape with more
    than 80% of the instructions).

    >>> from fusionlab import parse
    >>> p = parse("ARRAY A float64[4]\\nARRAY B float64[5]\\nCOPY A, 1\\nCOPY B, 2\\nDEL A\\nSYNC B")
    >>> shape_classes(setup(p, "bohrium"))
    [[0, 2], [1, 3]]
    """
    g, program = ctx.graph, ctx.program
    if not isinstance(ctx.model, Bohrium) or any(g.opaque):
        return []
    groups: dict[Any, list[int]] = {}
    system: list[int] = []
    for i, ins in enumerate(program):
        if ins.opcode in OpFamily.SYSTEM:
            system.append(i)
        elif g.domain[i] is None:
            return []  # a shapeless instruction that is not a system one: not covered above
        else:
            groups.setdefault(g.domain[i], []).append(i)
    if len(groups) < 2 or max(map(len, groups.values())) > 0.8 * len(program):
        return []  # one shape holds nearly everything: the split would not make it smaller
    out = []
    for members in groups.values():
        bases = {v.base.name for i in members for v in program[i].outputs + program[i].views_in}
        extra = [i for i in system if (program[i].outputs + program[i].views_in)[0].base.name in bases]
        out.append(sorted(members + extra))
    return out


def _apart(ctx: Context, own: Budget) -> list[int]:
    """Per instruction, the instructions it can never share a block with (separation over
    the whole graph: the fusion rule's pairs (:func:`~fusionlab.analysis.legality.conflict_masks`),
    and paths through them)."""
    g = ctx.graph
    initial = conflict_masks([g.unit(i) for i in range(g.n)], own, "exact: separation")
    succ: list[list[int]] = [[] for _ in range(g.n)]
    for u, v in g.dependencies:
        succ[u].append(v)
    return separated(succ, budget=own, initial=initial, phase="exact: separation")


def _subprogram(program: Program, members: list[int]) -> Program:
    names = {v.base.name for i in members for v in program[i].outputs + program[i].views_in}
    return Program(tuple(b for b in program.bases if b.name in names), tuple(program[i] for i in members))


def _rules_within(graph: WSPGraph, sub: WSPGraph, members: list[int]) -> bool:
    """Whether every fuse-preventing pair of the class is one of the whole graph's (a class
    has one iteration shape and no opaque instruction: its pairs are the explicit ones)."""
    return all(graph.forbidden(members[u], members[v]) is not None
               for u in range(sub.n) for v in bit_indices(sub.explicit_mask[u]) if v > u)


def solve_by_shape(ctx: Context, own: Budget, classes: list[list[int]], solve: Solver
                   ) -> tuple[list[list[int]], bool, float, str] | None:
    """Solve each class with ``solve`` and join: (blocks, proven, lower bound, note), or
    ``None`` when a class's rules are not the whole graph's."""
    n = len(ctx.program)
    owner: dict[int, int] = {}  # a system instruction -> the block that keeps it
    blocks: list[list[int]] = []
    bound, proven = 0.0, True
    acc, synced = graph_accesses(ctx.graph)
    apart = _apart(ctx, own)
    classes = sorted(classes, key=len)  # the small ones first: the time they leave goes to the large
    for k, members in enumerate(classes):
        # the part's graph is built for the backend the whole one is
        sub = WSPGraph(_subprogram(ctx.program, members), budget=own, capabilities=ctx.graph.capabilities)
        if not _rules_within(ctx.graph, sub, members):
            return None
        # the whole program's accesses: a base created by another class is not new here
        sub.derived["access_info"] = ([acc[i] for i in members], synced)
        # and the pairs a path through another class keeps apart (still a relaxation)
        inside = sum(1 << i for i in members)
        where = {g: k for k, g in enumerate(members)}
        for u, g in enumerate(members):
            for h in bit_indices(apart[g] & inside):
                if h > g and sub.forbidden(u, where[h]) is None:
                    sub.forbid_pair(u, where[h], Conflict.SHAPE, "a dependency path through another iteration shape")
        left = sum(len(c) for c in classes[k:])
        share = own.child(own.remaining() * len(members) / left)
        got = solve(setup(sub, ctx.model, share), share)
        bound += got.cost if got.proven_optimal else (got.bound or 0.0)
        proven = proven and got.proven_optimal
        for b in got.blocks:
            block = [members[i] for i in b]
            system = [i for i in block if ctx.program[i].opcode in OpFamily.SYSTEM]
            if len(system) < len(block):  # a block with computation claims its DELs and SYNCs
                keep = [i for i in block if i not in owner]
                for i in system:
                    owner.setdefault(i, len(blocks))
                blocks.append(keep)
    blocks = [b for b in blocks if b]
    placed = {i for b in blocks for i in b}
    blocks += [[i] for i in range(n) if i not in placed]
    note = f"split by iteration shape into {len(classes)} classes (largest {max(map(len, classes))} instructions)"
    return blocks, proven, bound, note
