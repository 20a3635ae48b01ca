"""One merge decision (issue 14): :func:`fusionlab.analysis.legality.fusion_conflict` decides, and every
other answer about what may share a block is it or a fast path checked against it here.

On random programs (``strategies.programs``, programs with opaque instructions, scans,
filters, gathers and contractions, ``fusionlab.ir.examples.random_program``) and on the
workloads' captured programs, over random partitions: ``forbidden_between`` and
``merge_problem`` are the function's answer, ``compatible``, ``first_compatible``,
``can_merge`` and ``conflict_masks`` agree with it on every pair of blocks, the block rule
is the pair rule lifted (two fusible blocks conflict exactly when a pair of their
instructions does, with that pair's reason), and ``partition_problems`` is empty exactly
when every block's pairs pass and the blocks make no cycle.
"""

from __future__ import annotations

import io
import random
from contextlib import redirect_stdout
from graphlib import CycleError, TopologicalSorter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fusionlab import BytecodeError, ProgramError, parse
from fusionlab.capture import capture
from fusionlab.ir.examples import fig3, random_program
from fusionlab.analysis.legality import (
    BlockSummary, Conflict, conflict_masks, first_conflict, fusion_conflict,
)
from fusionlab.workloads import ALL_WORKLOADS
from fusionlab.analysis.wsp import IllegalMerge, PartitionState, WSPGraph, partition_problems

from strategies import programs

_HEADER = """ARRAY A float64[6]
ARRAY B float64[6]
ARRAY C float64[7]
ARRAY D float64[2, 3]
ARRAY E float64[2, 3]
ARRAY G float64[3, 3]
ARRAY H float64[3, 3]
ARRAY F float64[3, 3]
ARRAY M bool[6]
ARRAY Y float64[6]
ARRAY I int64[6]
ARRAY s float64[]
ARRAY r float64[3]
"""
_V6 = ["A", "B", "A[::-1]", "C[1:]", "C[:-1]", "Y"]
_V23 = ["D", "E"]
_TEMPLATES = [
    "{bin} {o6}, {v6}, {v6}", "{bin} {o6}, {v6}, 2", "{un} {o6}, {v6}", "{bin} {o23}, {v23}, {v23}",
    "ADD_REDUCE s, {v6}", "MAXIMUM_REDUCE r, {v23}, axis=0", "ADD_REDUCE s, {v23}",
    "ADD_ACCUMULATE {o6}, {v6}, axis=0", "MAXIMUM_ACCUMULATE {o23}, {v23}, axis={axis}",
    "GREATER M, {v6}, 0", "COMPRESS Y, {v6}, M", 'OPAQUE {o6}, {v6}, name="sort"', 'OPAQUE s, {v23}, name="det"',
    "GATHER {o6}, {v6}, I", "ADD I, I, 1", 'CONTRACT F, G, H, subscripts="ij,jk->ik"', "MULTIPLY G, H, 2",
    "ADD F, F, G", "RANGE {o6}", "SYNC {base}", "DEL {base}",
]


@st.composite
def rich_programs(draw: st.DrawFn, max_size: int = 10):
    """Programs mixing maps over slices, reductions with axes, scans, a filter, a gather, a
    contraction, opaque instructions, SYNC and DEL (lines the parser refuses are dropped)."""
    lines: list[str] = []
    for _ in range(draw(st.integers(2, max_size))):
        line = draw(st.sampled_from(_TEMPLATES)).format(
            bin=draw(st.sampled_from(["ADD", "MULTIPLY", "SUBTRACT", "MAXIMUM"])),
            un=draw(st.sampled_from(["NEGATIVE", "ABSOLUTE", "COPY"])),
            o6=draw(st.sampled_from(_V6)), v6=draw(st.sampled_from(_V6)),
            o23=draw(st.sampled_from(_V23)), v23=draw(st.sampled_from(_V23)), axis=draw(st.sampled_from([0, 1])),
            base=draw(st.sampled_from(["A", "B", "C", "D", "Y", "F"])))
        try:
            parse(_HEADER + "\n".join(lines + [line]))
        except (BytecodeError, ProgramError):
            continue
        lines.append(line)
    return parse(_HEADER + "\n".join(lines))


def random_states(graph: WSPGraph, rnd: random.Random) -> list[PartitionState]:
    """An arbitrary grouping (blocks may be illegal) and one grown by random legal merges."""
    groups = max(1, graph.n // 2)
    label = [rnd.randrange(groups) for _ in range(graph.n)]
    blocks = [[i for i in range(graph.n) if label[i] == k] for k in range(groups)]
    arbitrary = PartitionState(graph, [b for b in blocks if b])
    grown = PartitionState(graph)
    for _ in range(3 * graph.n):
        ids = sorted(grown.members)
        if len(ids) < 2:
            break
        b, x = rnd.sample(ids, 2)
        if grown.can_merge(b, x):
            grown.merge(b, x, reuse=rnd.random() < 0.5)
    return [arbitrary, grown]


def _pairs_fusible(graph: WSPGraph, block: tuple[int, ...]) -> bool:
    return all(graph.forbidden(u, v) is None for k, u in enumerate(block) for v in block[k + 1:])


def _acyclic(state: PartitionState) -> bool:
    try:
        tuple(TopologicalSorter({b: state.pred[b] for b in state.members}).static_order())
    except CycleError:
        return False
    return True


def check_fast_paths(graph: WSPGraph, state: PartitionState, rnd: random.Random, max_pairs: int = 4000) -> int:
    """Every fast path of ``state`` against the one function, on every pair of blocks (a
    random sample of ``max_pairs`` when there are more); returns the pairs checked."""
    ids = sorted(state.members)
    pairs = [(b, x) for b in ids for x in ids if b != x]
    if len(pairs) > max_pairs:
        pairs = rnd.sample(pairs, max_pairs)
    masks = conflict_masks([state.summary(b) for b in ids])
    pos = {b: k for k, b in enumerate(ids)}
    for b, x in pairs:
        got = fusion_conflict(graph, state.summary(b), state.summary(x))
        assert state.forbidden_between(b, x) == got
        assert state.compatible(b, x) == (got is None), (state.block(b), state.block(x), got)
        assert (masks[pos[b]] >> pos[x] & 1) == (got is not None), (state.block(b), state.block(x), got)
        problem = state.merge_problem(b, x)
        if got is not None:
            assert problem == (IllegalMerge.FORBIDDEN, f"{got[0].value}: {got[1]}")
        else:
            assert problem is None or problem[0] is IllegalMerge.CYCLE
        assert state.can_merge(b, x) == (problem is None)
        # the same reason whichever block is named first
        back = fusion_conflict(graph, state.summary(x), state.summary(b))
        assert (back is None) == (got is None) and (got is None or back[0] is got[0])
    # Robinson's greedy's scan against the one function, from a few starts and skip sets
    for b in rnd.sample(ids, min(len(ids), 12)):
        skip = {b} | set(rnd.sample(ids, len(ids) // 3))
        for start in {0, len(ids) // 2, rnd.randrange(len(ids))}:
            want = next((j for j in range(start, len(ids)) if ids[j] not in skip
                         and fusion_conflict(graph, state.summary(b), state.summary(ids[j])) is None), None)
            assert state.first_compatible(b, ids, start, skip) == want
    return len(pairs)


def check_block_rule_is_the_pair_rule(graph: WSPGraph, state: PartitionState, rnd: random.Random) -> None:
    """Two fusible blocks conflict exactly when a pair of their instructions does, and then
    with the reason and detail of such a pair (the lowest, for explicit edges)."""
    fusible = [b for b in sorted(state.members) if _pairs_fusible(graph, state.block(b))]
    pairs = [(b, x) for b in fusible for x in fusible if b != x]
    for b, x in rnd.sample(pairs, min(len(pairs), 400)):
        got = fusion_conflict(graph, state.summary(b), state.summary(x))
        cross = {(u, v): graph.forbidden(u, v) for u in state.block(b) for v in state.block(x)}
        reasons = {r for r in cross.values() if r is not None}
        assert (got is None) == (not reasons)
        if got is not None:
            assert got in reasons
            explicit = sorted((min(u, v), max(u, v)) for (u, v), r in cross.items()
                              if graph.explicit_mask[u] >> v & 1)
            if explicit:
                assert got == graph.explicit_reason(*explicit[0])


def check_partition_problems(graph: WSPGraph, state: PartitionState) -> None:
    """``partition_problems`` lists exactly the forbidden pairs inside blocks (by the one
    function on instruction pairs) and a cycle exactly when the blocks make one."""
    blocks = state.blocks()
    problems = partition_problems(graph, blocks, limit=10 ** 6)
    listed = {tuple(int(w) for w in p.split(" share")[0].split()[1::2]) for p in problems
              if p.startswith("instructions ")}
    want = {(u + 1, v + 1) for b in blocks for k, u in enumerate(b) for v in b[k + 1:]
            if graph.forbidden(u, v) is not None}
    assert listed == want
    fusible = all(_pairs_fusible(graph, b) for b in blocks)
    assert (problems == []) == (fusible and _acyclic(state))
    assert any(p.startswith("the blocks depend") for p in problems) == (not _acyclic(state))


def check_pair_rule(graph: WSPGraph) -> None:
    """The instruction pair rule, spelled out in its order: an explicit edge's own reason,
    then an opaque instruction beside a computing or opaque one, then unequal domains."""
    for u in range(graph.n):
        for v in range(graph.n):
            got = graph.forbidden(u, v)
            if u == v:
                assert got is None
            elif graph.explicit_mask[u] >> v & 1:
                assert got == graph.explicit_reason(u, v)
            elif (graph.opaque[u] and (graph.domain[v] is not None or graph.opaque[v])) or \
                    (graph.opaque[v] and graph.domain[u] is not None):
                assert got is not None and got[0] is Conflict.OPAQUE
            elif None not in (graph.domain[u], graph.domain[v]) and graph.domain[u] != graph.domain[v]:
                assert got is not None and got[0] is Conflict.SHAPE
            else:
                assert got is None


def check_all(graph: WSPGraph, rnd: random.Random, max_pairs: int = 4000) -> None:
    if graph.n <= 150:
        check_pair_rule(graph)
    for state in random_states(graph, rnd):
        check_fast_paths(graph, state, rnd, max_pairs)
        check_block_rule_is_the_pair_rule(graph, state, rnd)
        check_partition_problems(graph, state)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(min_size=2, max_size=12), st.randoms(use_true_random=False))
def test_fast_paths_agree_on_random_programs(p, rnd):
    check_all(WSPGraph(p), rnd)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rich_programs(), st.randoms(use_true_random=False))
def test_fast_paths_agree_on_programs_with_opaque_scans_filters_gathers(p, rnd):
    check_all(WSPGraph(p), rnd)


@pytest.mark.parametrize("seed", range(4))
def test_fast_paths_agree_on_random_program(seed):
    check_all(WSPGraph(random_program(120, seed=seed)), random.Random(seed))


def _workload_graphs() -> list[tuple[str, WSPGraph]]:
    out = []
    for name, w in sorted(ALL_WORKLOADS.items()):
        with redirect_stdout(io.StringIO()):
            cap = capture(w.script("tiny"), {})
        seen = set()
        for batch in cap.batches:
            if batch.signature() not in seen and len(seen) < 2:
                seen.add(batch.signature())
                out.append((f"{name}/{len(seen)}", WSPGraph(batch)))
    return out


def test_fast_paths_agree_on_the_workloads():
    graphs = _workload_graphs()
    assert len(graphs) >= len(ALL_WORKLOADS)
    # the workloads no longer hold an opaque call (row selections and ``a.flat`` are captured):
    # a cell with NumPy calls capture runs as NumPy keeps the opaque rule among the pairs checked
    with redirect_stdout(io.StringIO()):
        cell = capture("import numpy as np\nx = np.linspace(0.0, 1.0, 64)\ny = np.sort(x * 2.0)\n"
                       "z = np.sin(y + x)\nm = np.median(z - y)\nw = z * m + np.partition(x, 3)\n", {})
    graphs += [(f"opaque cell/{k}", WSPGraph(b)) for k, b in enumerate(cell.batches)]
    kinds = set()
    for label, g in graphs:
        kinds |= {r for *_, r, _ in g.drawn_conflicts()}
        check_all(g, random.Random(label), max_pairs=600)
    # the workloads exercise the opaque rule and several explicit ones, not shapes alone
    assert Conflict.OPAQUE in kinds
    assert len(kinds) >= 4, kinds


def test_one_function_answers_for_pairs_blocks_and_merges():
    g = WSPGraph(fig3())
    assert g.forbidden(4, 9) == fusion_conflict(g, g.unit(4), g.unit(9)) == g.forbidden(9, 4)
    s = PartitionState(g, [[0, 4], [9], *[[i] for i in range(17) if i not in (0, 4, 9)]])
    a, b = s.block_of[0], s.block_of[9]
    assert s.forbidden_between(a, b) == g.forbidden(4, 9)
    assert s.merge_problem(a, b) == (IllegalMerge.FORBIDDEN, f"{Conflict.OVERLAP.value}: D[1:] overlaps D[:-1]")
    assert first_conflict(g, [g.unit(0), g.unit(4), g.unit(9)])[:2] == (1, 2)
    assert first_conflict(g, [g.unit(0), g.unit(4)]) is None and first_conflict(g, []) is None


def test_opaque_detail_names_the_opaque_instruction_either_way():
    p = parse('ARRAY a float64[4]\nARRAY b float64[4]\nARRAY c float64[4]\nCOPY a, 1\n'
              'OPAQUE b, a, name="sort"\nOPAQUE c, a, name="sort"\nDEL a')
    g = WSPGraph(p)
    assert g.forbidden(0, 1) == g.forbidden(1, 0) == (Conflict.OPAQUE, "instruction 2 is opaque")
    assert g.forbidden(2, 1) == (Conflict.OPAQUE, "instruction 2 is opaque")   # the lower of two opaque ones
    assert g.forbidden(1, 3) is None and g.forbidden(3, 2) is None            # DEL fuses with an opaque one
    s = PartitionState(g, [[0, 3], [1], [2]])
    assert not s.compatible(s.block_of[0], s.block_of[1]) and not s.compatible(s.block_of[1], s.block_of[2])
    assert partition_problems(g, [[1, 3], [0], [2]]) == []
    assert partition_problems(g, [[0, 1, 3], [2]])[0].startswith("instructions 1 and 2 share a block: an opaque")


def test_summary_union_and_masks():
    a = BlockSummary(0b0011, (4,), 0, 0b0100)
    b = BlockSummary(0b0100, (4,), 0, 0b0001)
    c = BlockSummary(0b1000, None, 0b1000, 0)
    assert (a | c).domain == (4,) and (c | a).domain == (4,) and (a | c).opaque == 0b1000
    assert conflict_masks([a, b, c]) == [0b110, 0b101, 0b011]
    assert conflict_masks([BlockSummary(0b1, None, 0, 0), c]) == [0, 0]   # DEL and an opaque one
