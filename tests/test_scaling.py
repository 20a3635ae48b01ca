"""Scaling of the partition algorithms on long straight-line programs: structure and counts.

The fast paths (greedy's incremental weight edges over the saving index, the block-wise
legality test) are checked against their slow definitions on random programs; the long
programs (a heat stencil captured for many iterations, a scalar loop of thousands of
zero-dimensional instructions) are checked for legality and for how many savings were
priced, which grows linearly here where it grew quadratically before. Times are measured
by benchmarks/bench_partition.py, never asserted.
"""

from __future__ import annotations

import heapq

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fusionlab import parse
from fusionlab.capture import capture
from fusionlab.costs import Evaluator, access_info, get_cost_model
from fusionlab.ir.examples import fig3, random_program
from fusionlab.partition import partition
from fusionlab.partition.greedy import greedy_merge
from fusionlab.workloads import ALL_WORKLOADS
from fusionlab.analysis.wsp import PartitionState, WSPGraph

from strategies import programs

SPARSE_MODELS = ["bohrium", "max_contract", "max_locality"]


def scalar_loop(n: int):
    """What capture recorded for ``for i in range(n): s = s + a[i] * a[i]`` (8 per element)."""
    decl = [f"ARRAY a float64[{n}]", "ARRAY s0 float64[]"]
    body = ["RANGE a", "COPY s0, 0"]
    for i in range(n):
        decl += [f"ARRAY x{i} float64[]", f"ARRAY y{i} float64[]", f"ARRAY p{i} float64[]", f"ARRAY s{i + 1} float64[]"]
        body += [f"COPY x{i}, a[{i}]", f"COPY y{i}, a[{i}]", f"MULTIPLY p{i}, x{i}, y{i}", f"DEL x{i}", f"DEL y{i}",
                 f"ADD s{i + 1}, s{i}, p{i}", f"DEL p{i}", f"DEL s{i}"]
    return parse("\n".join(decl + body + [f"SYNC s{n}"]))


HEAT = """
import numpy as np
u = np.zeros((32, 32))
u[0, :] = 1.0
for _ in range({iters}):
    v = u.copy()
    v[1:-1, 1:-1] = u[1:-1, 1:-1] + 0.1 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4 * u[1:-1, 1:-1])
    u = v
"""


# -- the slow definitions ---------------------------------------------------------------------


def _touches(program, acc, block):
    views, bases, special = set(), set(), set()
    for i in block:
        ins = program[i]
        views.update(ins.reads() + ins.writes())
        special |= acc[i].new | acc[i].deleted
    bases = {v.base.name for v in views}
    return views, bases, special


def related(program, acc, b1, b2) -> bool:
    """A shared view, or one block creates or frees a base the other accesses."""
    v1, n1, s1 = _touches(program, acc, b1)
    v2, n2, s2 = _touches(program, acc, b2)
    return bool(v1 & v2 or s1 & n2 or s2 & n1)


def reference_greedy(program, model, zero_edges=True):
    """Greedy as Fig. 7 says it: every weight edge of a new block priced after each merge,
    candidates the related blocks and the dependency neighbours, ties to the earliest."""
    g = WSPGraph(program)
    state = PartitionState(g)
    ev = Evaluator(get_cost_model(model), g)
    acc, _ = access_info(program)
    heap = []

    def push(b, x):
        if not state.compatible(b, x):
            return
        if not (x in state.neighbours(b) or related(program, acc, state.block(b), state.block(x))):
            return
        s = ev.saving(state.members[b], state.members[x])
        if s > 1e-9 or (zero_edges and s > -1e-9):
            f1, f2 = sorted((state.first[b], state.first[x]))
            heapq.heappush(heap, (-max(s, 0.0), f1, f2, b, x))

    for b in sorted(state.members):
        for x in sorted(state.members):
            if x > b:
                push(b, x)
    while heap:
        _, _, _, b, x = heapq.heappop(heap)
        if b not in state.members or x not in state.members or not state.can_merge(b, x):
            continue
        z = state.merge(b, x)
        for y in sorted(state.members):
            if y != z:
                push(z, y)
    return tuple(sorted(state.blocks()))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(min_size=1, max_size=10), st.sampled_from(SPARSE_MODELS), st.booleans())
def test_incremental_greedy_equals_the_plain_loop(p, model, zero_edges):
    assert partition(p, "greedy", model, zero_edges=zero_edges).blocks == reference_greedy(p, model, zero_edges)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("model", SPARSE_MODELS)
def test_incremental_greedy_equals_the_plain_loop_on_longer_programs(seed, model):
    p = random_program(40, seed=seed)
    assert partition(p, "greedy", model).blocks == reference_greedy(p, model)


def test_incremental_greedy_keeps_the_papers_figures():
    r = partition(fig3(), "greedy", "bohrium")
    assert (r.cost_elements, r.kernels) == (38, 4) and r.blocks == reference_greedy(fig3(), "bohrium")


def reference_dense_greedy(program, model, zero_edges=True):
    """Greedy with every pair of blocks a weight edge (a merge bonus): all compatible pairs
    priced at the start and every pair of a new block after each merge, ties to the earliest."""
    g = WSPGraph(program)
    state = PartitionState(g)
    ev = Evaluator(get_cost_model(model), g)
    heap = []

    def push(b, x):
        s = ev.block_cost(state.members[b]) + ev.block_cost(state.members[x]) - \
            ev.block_cost(state.members[b] | state.members[x])
        if state.compatible(b, x) and (s > 1e-9 or (zero_edges and s > -1e-9)):
            f1, f2 = sorted((state.first[b], state.first[x]))
            heapq.heappush(heap, (-max(s, 0.0), f1, f2, b, x))

    for b in sorted(state.members):
        for x in sorted(state.members):
            if x > b:
                push(b, x)
    while heap:
        _, _, _, b, x = heapq.heappop(heap)
        if b not in state.members or x not in state.members or not state.can_merge(b, x):
            continue
        z = state.merge(b, x)
        for y in sorted(state.members):
            if y != z:
                push(z, y)
    return tuple(sorted(state.blocks()))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(min_size=1, max_size=10), st.booleans())
def test_robinson_greedy_equals_the_plain_loop_over_every_pair(p, zero_edges):
    assert partition(p, "greedy", "robinson", zero_edges=zero_edges).blocks == \
        reference_dense_greedy(p, "robinson", zero_edges)


@pytest.mark.parametrize("seed", range(4))
def test_robinson_greedy_equals_the_plain_loop_over_every_pair_on_longer_programs(seed):
    p = random_program(40, seed=seed)
    assert partition(p, "greedy", "robinson").blocks == reference_dense_greedy(p, "robinson")


def test_robinson_greedy_on_a_stencil_prices_only_related_pairs():
    # every iteration reads the same views: related pairs are many, but the pairs of
    # blocks of different iterations with nothing in common are never priced one by one
    p = max(capture(HEAT.format(iters=6)).batches, key=len)
    g = WSPGraph(p)
    ev = Evaluator(get_cost_model("robinson"), g)
    state = PartitionState(g)
    greedy_merge(state, ev)
    assert tuple(sorted(state.blocks())) == reference_dense_greedy(p, "robinson")
    n = len(p)
    assert ev.evaluations < n * (n - 1) // 4


@settings(max_examples=150, deadline=None)
@given(programs(min_size=2, max_size=10), st.sampled_from(SPARSE_MODELS + ["robinson"]),
       st.randoms(use_true_random=False))
def test_sparse_savings_claims_hold(p, model, rnd):
    """The two facts the incremental greedy rests on (``AdditiveCostModel.sparse_savings``):
    a saving above the merge bonus needs related blocks, and merging an unrelated block
    leaves a saving unchanged."""
    g = WSPGraph(p)
    m = get_cost_model(model)
    ev = Evaluator(m, g)
    acc, _ = access_info(p)
    labels = [rnd.randrange(4) for _ in range(g.n)]
    blocks = [b for b in ([i for i in range(g.n) if labels[i] == k] for k in range(4)) if b]
    mask = [sum(1 << i for i in b) for b in blocks]
    for a in range(len(blocks)):
        for c in range(len(blocks)):
            if a == c:
                continue
            s = ev.saving(mask[a], mask[c])
            if not related(p, acc, blocks[a], blocks[c]):
                assert abs(s - m.merge_bonus) < 1e-9
            for x in range(len(blocks)):
                if x not in (a, c) and not related(p, acc, blocks[x], blocks[c]):
                    assert abs(ev.saving(mask[a] | mask[x], mask[c]) - s) < 1e-9


@settings(max_examples=60, deadline=None)
@given(programs(min_size=2, max_size=10), st.randoms(use_true_random=False))
def test_merge_reusing_an_id_equals_a_fresh_state(p, rnd):
    """``PartitionState.merge(reuse=True)`` keeps the larger id; the state must equal one
    built from the resulting blocks."""
    g = WSPGraph(p)
    state = PartitionState(g)
    for _ in range(rnd.randrange(0, g.n)):
        ids = sorted(state.members)
        if len(ids) < 2:
            break
        b, x = rnd.sample(ids, 2)
        state.merge(b, x, reuse=rnd.random() < 0.5)
    fresh = PartitionState(g, state.blocks())
    by_block = {state.block(b): b for b in state.members}
    fresh_by_block = {fresh.block(b): b for b in fresh.members}
    for blk, b in by_block.items():
        f = fresh_by_block[blk]
        assert state.first[b] == fresh.first[f] and state.last[b] == fresh.last[f]
        assert state.explicit[b] == fresh.explicit[f] and state.opaque[b] == fresh.opaque[f]
        assert {state.block(y) for y in state.succ[b]} == {fresh.block(y) for y in fresh.succ[f]}
        assert {state.block(y) for y in state.pred[b]} == {fresh.block(y) for y in fresh.pred[f]}
        assert all(state.block_of[i] == b for i in blk)


def _reaches(state, b1, b2) -> bool:
    """A path of length >= 2 from ``b1`` to ``b2``, by plain search (a path, not a walk
    back through ``b1``, when the blocks make a cycle)."""
    seen, stack = set(), [x for x in state.succ[b1] if x != b2]
    while stack:
        x = stack.pop()
        if x in seen or x == b1:
            continue
        seen.add(x)
        if b2 in state.succ[x]:
            return True
        stack.extend(state.succ[x])
    return False


@settings(max_examples=150, deadline=None)
@given(programs(min_size=2, max_size=12), st.randoms(use_true_random=False))
def test_ranks_stay_topological_and_cycle_tests_stay_exact(p, rnd):
    """The ranks that bound ``long_path``'s search stay a topological order through legal
    merges, and the legality test answers as a plain search does."""
    state = PartitionState(WSPGraph(p))
    for _ in range(3 * len(p)):
        ids = sorted(state.members)
        if len(ids) < 2:
            break
        b, x = rnd.sample(ids, 2)
        cycle = _reaches(state, b, x) or _reaches(state, x, b)
        assert (state.long_path(b, x) is not None or state.long_path(x, b) is not None) == cycle
        if state.compatible(b, x) and not cycle:
            state.merge(b, x, reuse=rnd.random() < 0.5)
            assert state.rank is not None
            assert all(state.rank[u] < state.rank[v] for u in state.succ for v in state.succ[u])


def _closure(state, b) -> int:
    """The instructions of every block a path from ``b`` reaches, by plain search."""
    seen, stack, mask = set(), list(state.succ[b]), 0
    while stack:
        x = stack.pop()
        if x not in seen:
            seen.add(x)
            mask |= state.members[x]
            stack.extend(state.succ[x])
    return mask


def _check_legality(state) -> None:
    """Every legality answer of ``state`` against the plain definitions."""
    ids = sorted(state.members)
    reach = state.reach_masks()
    if reach is not None:
        assert reach == {b: _closure(state, b) for b in ids}
    for b in ids:
        for x in ids:
            if b == x:
                continue
            assert state.has_long_path(b, x) == _reaches(state, b, x)
            assert state.reaches(b, x) == bool(_closure(state, b) & state.members[x])
            plain = state.compatible(b, x) and not _reaches(state, b, x) and not _reaches(state, x, b)
            assert state.can_merge(b, x) == plain
        # the scan's inner loop (Robinson's greedy) against compatible() pair by pair
        skip = set(ids[::3])
        for start in (0, len(ids) // 2):
            want = next((j for j in range(start, len(ids)) if ids[j] != b and ids[j] not in skip
                         and state.compatible(b, ids[j])), None)
            assert state.first_compatible(b, ids, start, skip | {b}) == want


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(min_size=2, max_size=12), st.randoms(use_true_random=False))
def test_fast_legality_equals_the_plain_definition_through_merges(p, rnd):
    """``can_merge``, ``has_long_path`` and ``reaches`` answer from the kept transitive
    closure (``reach_masks``); after random merge sequences (reusing ids or not, on copies,
    some making a cycle) every answer equals a plain search for a path through another block."""
    state = PartitionState(WSPGraph(p))
    if rnd.random() < 0.5:
        state.reach_masks()  # built at the start, else on the first query after some merges
    for _ in range(2 * len(p)):
        ids = sorted(state.members)
        if len(ids) < 2:
            break
        b, x = rnd.sample(ids, 2)
        if rnd.random() < 0.7:
            _check_legality(state)
        if rnd.random() < 0.2:
            state = state.copy()
        legal = state.can_merge(b, x)
        if legal or rnd.random() < 0.1:  # now and then an illegal merge: a cycle or a forbidden pair
            state.merge(b, x, reuse=rnd.random() < 0.5)
    _check_legality(state)


@settings(max_examples=80, deadline=None)
@given(programs(min_size=3, max_size=12), st.randoms(use_true_random=False))
def test_a_cycle_stays_until_one_of_its_blocks_changes(p, rnd):
    """What greedy's dropped pairs rest on: a pair of blocks joined by a path through
    another block stays so while only other blocks merge (legally); the path contracts
    but still passes through a block that is neither end."""
    state = PartitionState(WSPGraph(p))
    for _ in range(2 * len(p)):
        ids = sorted(state.members)
        cycles = [(b, x) for b in ids for x in ids if b != x and _reaches(state, b, x)]
        others = [(b, x) for b in ids for x in ids if b < x and state.can_merge(b, x)]
        if not others:
            break
        b, x = rnd.choice(others)
        z = state.merge(b, x, reuse=rnd.random() < 0.5)
        for u, v in cycles:
            if {u, v} & {b, x}:
                continue
            assert u != z and v != z and state.has_long_path(u, v) and _reaches(state, u, v)


def test_a_merge_that_makes_a_cycle_drops_the_ranks_and_the_closure():
    # 1 -> 2 -> 3: merging 1 and 3 makes a cycle with 2; the ranks once stayed (and then
    # pruned the cycle search wrongly), now no order and no closure is kept
    p = parse("ARRAY a float64[4]\nARRAY b float64[4]\nARRAY c float64[4]\nCOPY a, 1\nCOPY b, a\nCOPY c, b")
    state = PartitionState(WSPGraph(p))
    assert state.has_long_path(0, 2) and not state.can_merge(0, 2)
    z = state.merge(0, 2)
    assert state.rank is None and state.reach_masks() is None
    assert state.reaches(z, 1) and state.reaches(1, z)


class SearchLegality(PartitionState):
    """A state without the closure: legality by ``long_path``'s search between ranks."""

    def reach_masks(self):
        return None


class PlainLegality(SearchLegality):
    """A state whose legality test is the plain definition (a path searched block by block)."""

    def has_long_path(self, b1, b2):
        return _reaches(self, b1, b2)


def _greedy_blocks(graph, model, state_class):
    state = state_class(graph)
    greedy_merge(state, Evaluator(get_cost_model(model), graph))
    return tuple(sorted(state.blocks()))


@pytest.mark.parametrize("name", sorted(ALL_WORKLOADS) + ["random 0", "random 1", "random 2"])
def test_greedy_with_the_fast_legality_equals_the_plain_one(name):
    """Greedy's partition is the same with the closure-based legality test as with a plain
    path search, under every model, on every workload (tiny preset) and random programs."""
    if name.startswith("random"):
        program = random_program(60, seed=int(name.split()[1]))
    else:
        program = max(capture(ALL_WORKLOADS[name].script("tiny")).batches, key=len)
    g = WSPGraph(program)
    # the plain search is slow on lattice Boltzmann (1,227 instructions): the ranked one there
    oracle = PlainLegality if len(program) < 1000 else SearchLegality
    for model in SPARSE_MODELS + ["robinson"]:
        assert _greedy_blocks(g, model, PartitionState) == _greedy_blocks(g, model, oracle), model


# -- long programs: structure and counts ------------------------------------------------------


def _greedy_evaluations(program, model="bohrium"):
    g = WSPGraph(program)
    state = PartitionState(g)
    ev = Evaluator(get_cost_model(model), g)
    greedy_merge(state, ev)
    return state, ev.evaluations


@pytest.mark.parametrize("n", [125, 625])
def test_greedy_prices_linearly_many_savings_on_a_scalar_loop(n):
    program = scalar_loop(n)
    state, evaluations = _greedy_evaluations(program)
    # every instruction of the loop reads the same array: as candidates by shared base,
    # greedy priced about n**2 / 2 pairs (161,370 for n = 125); by shared element, a few per merge
    assert evaluations <= 12 * len(program)
    r = partition(program, "greedy")
    assert r.legal and r.kernels == 2 and r.blocks == tuple(sorted(state.blocks()))


@pytest.mark.parametrize("iters", [10, 60])
def test_greedy_and_unintrusive_on_a_long_stencil(iters):
    program = max(capture(HEAT.format(iters=iters)).batches, key=len)
    assert len(program) >= 15 * iters
    _, evaluations = _greedy_evaluations(program)
    assert evaluations <= 12 * len(program)
    single = partition(program, "singleton")
    for algorithm in ("greedy", "unintrusive", "linear"):
        r = partition(program, algorithm)
        assert r.legal and r.cost <= single.cost
    assert partition(program, "greedy").kernels < len(program) // 5


def test_the_optimal_search_set_up_prices_only_related_blocks():
    program = scalar_loop(200)
    r = partition(program, "optimal", max_nodes=50)
    assert r.legal and r.trace is not None
    # weight edges join related blocks only: a few per block, not every pair
    assert len(r.trace.edges) <= 4 * len(r.trace.start_blocks)


# -- formatting: the fast ``View.is_full`` ----------------------------------------------------


@st.composite
def _views(draw):
    from fusionlab.ir.bytecode import Base, ProgramError, View

    shape = tuple(draw(st.lists(st.integers(0, 3), min_size=0, max_size=3)))
    base = Base("B", "float64", shape)
    full = base.view()
    kind = draw(st.sampled_from(["full", "slice", "raw"]))
    if kind == "full":
        return full
    if kind == "slice":
        index = tuple(slice(draw(st.integers(0, n)), None, draw(st.sampled_from([1, 2]))) for n in shape)
        return full[index] if index else full
    # raw: the base's own geometry with strides of extent-1 axes or the offset disturbed, or a reshape
    strides = tuple(draw(st.integers(-2, 5)) if n <= 1 else s for n, s in zip(shape, full.strides))
    raw_shape = draw(st.sampled_from([shape, (base.size,), shape[::-1]]))
    if raw_shape != shape:
        strides = tuple(draw(st.integers(0, 3)) for _ in raw_shape)
    try:
        return View(base, raw_shape, strides, draw(st.integers(0, 1)))
    except ProgramError:
        return full


@settings(max_examples=300, deadline=None)
@given(_views())
def test_is_full_equals_comparing_with_the_bases_view(v):
    """``View.is_full`` (the listing asks it of every operand) answers without building the
    base's view, as ``v == v.base.view()`` does."""
    assert v.is_full() == (v == v.base.view())


def test_first_compatible_with_opaque_instructions():
    # an opaque instruction runs alone, but fuses with DEL and SYNC: the scan's inner loop
    # must ask about either side being opaque, as compatible() does
    p = parse('ARRAY a float64[4]\nARRAY b float64[4]\nARRAY c float64[5]\nCOPY a, 1\nOPAQUE b, a, name="sort"\n'
              'SYNC a\nADD a, a, b\nCOPY c, 2\nDEL b\nOPAQUE c, c, name="sort"')
    state = PartitionState(WSPGraph(p))
    ids = sorted(state.members)
    assert any(state.opaque.values())
    for b in ids:
        for start in range(len(ids)):
            want = next((j for j in range(start, len(ids)) if ids[j] != b and state.compatible(b, ids[j])), None)
            assert state.first_compatible(b, ids, start, {b}) == want
    assert [state.first_compatible(b, ids, 0, {b}) for b in ids] != [None] * len(ids)
