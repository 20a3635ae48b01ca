"""The WSP graph: dependencies, fuse-preventing edges with reasons, Lemma 1."""

from __future__ import annotations

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fusionlab import parse
from fusionlab.analysis import wsp
from fusionlab.ir.bytecode import (
    Base, Instruction, OpFamily, Opcode, Program, ProgramError, check_instruction,
)
from fusionlab.ir.examples import fig3
from fusionlab.ir.text import format_view
from fusionlab.analysis.wsp import (
    Access, Conflict, IllegalMerge, PartitionState, WSPGraph, partition_problems,
)

from strategies import programs


def test_fig3_dependencies_follow_conflicting_accesses():
    g = WSPGraph(fig3())
    deps = {(u + 1, v + 1): d.kind for (u, v), d in g.dependencies.items()}
    assert deps[(1, 5)] is Access.RAW          # COPY A, 0 -> ADD A, A, D[:-1]
    assert deps[(5, 10)] is Access.WAR         # reads D[:-1] before MAX writes D[1:]
    assert deps[(10, 11)] is Access.RAW        # MIN reads D[1:] that MAX wrote
    assert deps[(16, 17)] is Access.WAR        # SYNC D before DEL D
    assert (1, 2) not in deps and (3, 4) not in deps
    assert len(deps) == 51
    assert nx.is_directed_acyclic_graph(nx.DiGraph(list(deps)))


def test_fig3_forbidden_edges_carry_reasons():
    g = WSPGraph(fig3())
    overlap = sorted((u + 1, v + 1) for u, v, r, _ in g.forbidden_edges() if r is Conflict.OVERLAP)
    assert overlap == [(3, 5), (3, 6), (3, 10), (3, 11), (4, 7), (4, 8), (4, 10), (4, 11),
                       (5, 10), (6, 10), (7, 11), (8, 11)]
    reason, detail = g.forbidden(0, 2)
    assert reason is Conflict.SHAPE and detail == "(4,) vs (5,)"
    assert g.forbidden(9, 10) is None            # MAX and MIN use identical views
    assert g.forbidden(11, 2) is None            # DEL fuses with anything
    assert g.forbidden(0, 0) is None


def test_lemma1_reports_forbidden_and_cycle():
    s = PartitionState(WSPGraph(fig3()))
    reason, detail = s.merge_problem(s.block_of[4], s.block_of[9])
    assert reason is IllegalMerge.FORBIDDEN and "D[1:] overlaps D[:-1]" in detail
    reason, detail = s.merge_problem(s.block_of[0], s.block_of[5])
    assert reason is IllegalMerge.CYCLE and detail == "{1} -> {5} -> {6}"
    z = s.merge(s.block_of[0], s.block_of[4])
    assert s.merge_problem(z, s.block_of[5]) is None     # the path went through 5, now inside z
    assert s.merge_problem(z, z)[0] is IllegalMerge.SAME_BLOCK


def test_reduction_results_are_not_consumed_in_their_own_kernel():
    p = parse("ARRAY A float64[4]\nARRAY s float64[]\nSUM s, A\nADD A, A, s\nMULTIPLY A, A, 2")
    g = WSPGraph(p)
    assert g.forbidden(0, 1)[0] is Conflict.REDUCTION_RESULT
    assert g.forbidden(1, 2) is None


def test_opaque_instructions_run_alone():
    p = parse('ARRAY A float64[4]\nARRAY B float64[4]\nCOPY A, 1\nOPAQUE B, A, name="np.sort"\nDEL A\nSYNC B')
    g = WSPGraph(p)
    assert g.forbidden(0, 1)[0] is Conflict.OPAQUE
    assert g.forbidden(1, 2) is None and g.forbidden(1, 3) is None


def test_partition_problems_names_cycles():
    g = WSPGraph(fig3())
    blocks = [[0, 5]] + [[i] for i in range(17) if i not in (0, 5)]
    problems = partition_problems(g, blocks)
    assert problems == ["the blocks depend on each other in a cycle: {1,6} -> {5} -> {1,6}"]
    assert partition_problems(g, [[i] for i in range(17)]) == []


def test_to_networkx_carries_both_edge_kinds():
    G = WSPGraph(fig3()).to_networkx()
    kinds = [d["kind"] for _, _, d in G.edges(data=True)]
    assert kinds.count("dependency") == 51
    assert kinds.count("forbidden") == len(list(WSPGraph(fig3()).forbidden_edges()))
    assert G.nodes[9]["label"] == "MAXIMUM D[1:], T, E[1:]"


@given(programs(max_size=10))
def test_dependencies_are_exactly_the_conflicting_pairs(p):
    g = WSPGraph(p)
    for i, a in enumerate(p):
        for j in range(i + 1, len(p)):
            b = p[j]
            conflict = any(
                x.overlaps(y)
                for xs, ys in ((a.writes(), b.reads()), (a.writes(), b.writes()), (a.reads(), b.writes()))
                for x in xs for y in ys
            )
            assert ((i, j) in g.dependencies) == conflict


def test_convex_but_cyclic_partitions_are_illegal():
    # a -> b and c -> d only: {a, d} and {b, c} are convex (Def. 5(2) as written) but each
    # needs the other first, so the acyclic reading of docs/graph.md rejects them.
    p = parse(
        "ARRAY P float64[4]\nARRAY Q float64[4]\nARRAY R float64[4]\nARRAY S float64[4]\n"
        "COPY P, 1\nCOPY Q, 2\nADD R, P, 1\nADD S, Q, 1"
    )
    g = WSPGraph(p)
    assert set(g.dependencies) == {(0, 2), (1, 3)}
    blocks = [[0, 3], [1, 2]]
    closure = nx.transitive_closure(nx.DiGraph(list(g.dependencies)))
    convex = all(
        not (closure.has_edge(u, w) and closure.has_edge(w, v))
        for b in blocks for u in b for v in b for w in range(4) if w not in b
    )
    assert convex
    assert partition_problems(g, blocks) == ["the blocks depend on each other in a cycle: {1,4} -> {2,3} -> {1,4}"]


@settings(max_examples=60, deadline=None)
@given(programs(max_size=10))
def test_drawn_conflicts_are_the_non_shape_forbidden_edges(program):
    g = WSPGraph(program)
    want = [(u, v, r, d) for u, v, r, d in g.forbidden_edges() if r is not Conflict.SHAPE]
    assert g.drawn_conflicts() == want


def test_drawn_conflicts_include_opaque_pairs():
    g = WSPGraph(parse("ARRAY a float64[4]\nARRAY b float64[4]\nCOPY a, 1\nOPAQUE b, a, name=\"sort\"\n"
                       "ADD a, a, b\nSYNC a\n"))
    want = [(u, v, r, d) for u, v, r, d in g.forbidden_edges() if r is not Conflict.SHAPE]
    assert g.drawn_conflicts() == want and {r for *_, r, _ in want} == {Conflict.OPAQUE}


# -- the build against the plain pairwise definition ------------------------------------

def _pairwise_graph(p):
    """Def. 10-12 pair by pair over every pair of instructions and every base, without the
    build's shortcuts (writer pairs only, interval pruning, shared access patterns); a pair
    conflicting on several bases keeps the base named first in the program."""
    order = list(dict.fromkeys(v.base.name for ins in p for v in ins.reads() + ins.writes()))
    deps, forbid = {}, {}
    for i, a in enumerate(p):
        for j in range(i + 1, len(p)):
            b = p[j]
            for name in order:
                wi, ri = [v for v in a.writes() if v.base.name == name], [v for v in a.reads() if v.base.name == name]
                wj, rj = [v for v in b.writes() if v.base.name == name], [v for v in b.reads() if v.base.name == name]
                meet = lambda xs, ys: any(x.overlaps(y) for x in xs for y in ys)  # noqa: E731
                kind = Access.RAW if meet(wi, rj) else Access.WAW if meet(wi, wj) else \
                    Access.WAR if meet(ri, wj) else None
                if kind is not None:
                    deps.setdefault((i, j), (kind, name))
                if a.opcode is Opcode.SYNC and b.opcode not in OpFamily.SYSTEM and meet(ri, wj):
                    forbid.setdefault((i, j), (Conflict.SYNC_THEN_WRITE, f"{name} is written after its SYNC"))
                    continue
                if OpFamily.SYSTEM & {a.opcode, b.opcode}:
                    continue
                got = None
                scan_use = a.opcode in OpFamily.SCAN and b.opcode in OpFamily.ELEMENTWISE
                for o in wi:
                    for x in rj + wj:
                        if got is None and x != o and x.overlaps(o):
                            got = Conflict.OVERLAP, f"{format_view(x)} overlaps {format_view(o)}"
                        if got is None and a.opcode in OpFamily.REDUCTION | OpFamily.SCAN and x.overlaps(o) \
                                and not (scan_use and x == o):
                            got = Conflict.REDUCTION_RESULT, f"{a.opcode.name} result {format_view(o)} is used again"
                for o in wj:
                    for x in ri:
                        if got is None and x != o and x.overlaps(o):
                            got = Conflict.OVERLAP, f"{format_view(o)} overlaps {format_view(x)}"
                if got is not None:
                    forbid.setdefault((i, j), got)
    return deps, forbid


def _assert_is_pairwise(p):
    g = WSPGraph(p)
    deps, forbid = _pairwise_graph(p)
    assert {k: (d.kind, d.base) for k, d in g.dependencies.items()} == deps
    assert {k: g.forbidden(*k) for k in forbid} == forbid
    # the rules that are not about one base's accesses (scans, filters) come after the build
    whole_program = {Conflict.SCAN_RESULT, Conflict.SCAN_AXES, Conflict.SCAN_FILTER, Conflict.SCAN_REDUCTION,
                     Conflict.FILTER_OUTPUT}
    assert {k: v for k, v in g._explicit.items() if v[0] not in whole_program} == forbid
    masks = [0] * len(p)
    for i, j in g._explicit:
        masks[i] |= 1 << j
        masks[j] |= 1 << i
    assert g.explicit_mask == masks
    assert [sorted(s) for s in g.succ] == [sorted(j for (u, j) in deps if u == i) for i in range(len(p))]
    assert [sorted(s) for s in g.pred] == [sorted(u for (u, j) in deps if j == i) for i in range(len(p))]


@st.composite
def _row_programs(draw):
    """Programs on rows, columns and blocks of one matrix: most pairs touch disjoint element
    intervals (the build skips them), some overlap without being identical, with DEL, SYNC
    and a reduction."""
    M = Base("M", "float64", (4, 5))
    s = Base("s", "float64", ())
    r = Base("r", "float64", (5,))
    views = [M[i] for i in range(4)] + [M[i, 1:] for i in range(4)] + [M[i, :-1] for i in range(4)] + [M[:, 0], r.view()]
    body = []
    for _ in range(draw(st.integers(1, 14))):
        k = draw(st.integers(0, 9))
        if k == 0:
            body.append(Instruction(Opcode.SYNC, (), (draw(st.sampled_from([M, r])).view(),)))
        elif k == 1:
            body.append(Instruction(Opcode.ADD_REDUCE, (s.view(),), (draw(st.sampled_from(views[:4])),), {"axis": None}))
        else:
            out = draw(st.sampled_from(views))
            same = [v for v in views if v.shape == out.shape] + [s.view()]
            ins = Instruction(Opcode.ADD, (out,), (draw(st.sampled_from(same)), draw(st.sampled_from(same))))
            try:
                check_instruction(ins)
            except ProgramError:  # an input overlapping the output (Def. 11): not a program
                continue
            body.append(ins)
    body.append(Instruction(Opcode.DEL, (M.view(),)))
    return Program((M, s, r), tuple(body))


@settings(max_examples=80, deadline=None)
@given(st.one_of(programs(max_size=10), _row_programs()))
def test_build_equals_the_pairwise_definition(p):
    _assert_is_pairwise(p)


@settings(max_examples=40, deadline=None)
@given(st.one_of(programs(max_size=10), _row_programs()))
def test_build_equals_the_pairwise_definition_with_vector_candidates(p):
    # the NumPy candidate search (used for bases with many users) on small programs
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(wsp, "_VECTOR_USERS", 0)
        _assert_is_pairwise(p)


def test_build_equals_the_pairwise_definition_on_row_updates():
    # Gaussian elimination row by row: hundreds of users of one base, mostly disjoint rows
    n = 9
    A = Base("A", "float64", (n, n))
    f = Base("f", "float64", ())
    body = []
    for k in range(n - 1):
        for i in range(k + 1, n):
            body.append(Instruction(Opcode.DIVIDE, (f.view(),), (A[i, k], A[k, k])))
            body.append(Instruction(Opcode.MULTIPLY, (A[i, k:],), (A[i, k:], f.view())))
            body.append(Instruction(Opcode.SUBTRACT, (A[i, k:],), (A[i, k:], A[k, k:])))
    body.append(Instruction(Opcode.SYNC, (), (A.view(),)))
    p = Program((A, f), tuple(body))
    assert len(p) > 2 * wsp._VECTOR_USERS
    _assert_is_pairwise(p)
