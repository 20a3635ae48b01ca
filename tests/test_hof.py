"""Contractions as higher-order functions (paper 003): terms, rules, exploration, loop nests."""

from __future__ import annotations

import itertools
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from fusionlab.support.budget import Budget
from fusionlab.explore.hof.contraction import contraction_term, parse_subscripts
from fusionlab.explore.hof.explore import Step, explore, moves, replay
from fusionlab.explore.hof.loopnest import contract, loop_nest, parallel_level, parallel_refusal
from fusionlab.explore.hof.pipeline import (
    PIPELINE_RULES, Arr, NZip, Pair, Reduce, Rnz, apply_pipeline_rule, evaluate, lam, positions,
)
from fusionlab.explore.hof.rules import RULES, Reason, Refusal, apply_rule
from fusionlab.explore.hof.term import Level

# Table 1 and Table 2 of the paper, as printed (outermost HoF first)
TABLE1 = {("mapA", "rnz", "mapB"), ("rnz", "mapA", "mapB"), ("mapA", "mapB", "rnz"),
          ("mapB", "mapA", "rnz"), ("rnz", "mapB", "mapA"), ("mapB", "rnz", "mapA")}
TABLE2 = {("rnz", "mapA", "mapB", "rnz"), ("mapA", "rnz", "mapB", "rnz"),
          ("rnz", "mapA", "rnz", "mapB"), ("mapA", "rnz", "rnz", "mapB"),
          ("rnz", "rnz", "mapA", "mapB"), ("mapB", "rnz", "mapA", "rnz"),
          ("rnz", "mapB", "mapA", "rnz"), ("mapA", "mapB", "rnz", "rnz"),
          ("rnz", "mapB", "rnz", "mapA"), ("mapB", "mapA", "rnz", "rnz"),
          ("mapB", "rnz", "rnz", "mapA"), ("rnz", "rnz", "mapB", "mapA")}


def matmul(n: int = 4, m: int = 32, p: int = 5):
    return contraction_term("ij,jk->ik", (n, m), (m, p))


def test_matmul_arrangements_are_the_permutations_of_its_loops() -> None:
    t = matmul()
    r = explore(t)
    assert r.complete
    assert {u.levels for u in r.terms} == set(itertools.permutations(t.levels))
    assert len(r.terms) == 6
    assert {u.order() for u in r.terms} == TABLE1


def test_subdivided_matmul_counts_against_table2() -> None:
    t = matmul()
    r = explore(t, blocks={"j": 16})
    sub = [u for u in r.terms if u.blocks]
    loops = (Level("i"), Level("k"), Level("j", "outer"), Level("j", "inner"))
    # the rules tell the block loop from the element loop: 4! arrangements
    assert {u.levels for u in sub} == set(itertools.permutations(loops))
    assert len(sub) == 24 and len(r.terms) == 6 + 24
    # the paper does not differentiate the two rnz: 4!/2! = 12 orders, exactly Table 2's
    assert {u.order() for u in sub} == TABLE2


def test_matvec_prints_as_eq39_and_eq40() -> None:
    t = contraction_term("ij,j->i", (4, 6), (6,))
    assert str(t) == "map (\\a0 -> rnz (+) (*) a0 B) A"
    flipped = apply_rule(t, "map-rnz exchange", 0)
    assert str(flipped) == "rnz (zip (+)) (\\a0 b0 -> map (\\a1 -> a1 * b0) a0) (flip 0 A) B"
    sub = apply_rule(t, "subdivision", 1, 2)
    assert str(sub) == ("map (\\a0 -> rnz (+) (\\a1 b1 -> rnz (+) (*) a1 b1) a0 B') A'"
                        .replace("B'", "(subdiv 0 2 B)").replace("A'", "(subdiv 0 2 A)"))
    # Fig. 3: either subdivision, then every order of the three levels
    assert len(explore(t, blocks={"j": 2}).terms) == 2 + 6
    assert len(explore(t, blocks={"i": 2}).terms) == 2 + 6


def test_derivations_replay_to_the_same_term() -> None:
    t = matmul()
    r = explore(t, blocks={"j": 16})
    for u in r.terms:
        steps = r.derivation(u)
        assert replay(t, steps) == u
        # breadth-first: no derivation is longer than a subdivision and the swaps of 4 loops
        assert len(steps) <= 1 + 6
    assert r.derivation(t) == ()


def test_moves_list_each_rule_with_its_result_or_reason() -> None:
    t = matmul()
    menu = moves(t, {"j": 16})
    # three exchange rules at three positions, and subdivision where a block size is offered
    assert [(s.rule, s.position) for s, _ in menu] == [
        (r, p) for r in ("map-map flip", "map-rnz exchange", "rnz-rnz exchange") for p in range(3)
    ] + [("subdivision", 2)]
    applied = {new for _, new in menu if not isinstance(new, Refusal)}
    assert len(applied) == 3
    r = explore(t, blocks={"j": 16})
    assert {u for u in r.terms if len(r.derivation(u)) == 1} == applied
    reasons = {new.reason for _, new in menu if isinstance(new, Refusal)}
    assert reasons == {Reason.NOT_TWO_MAPS, Reason.NOT_MAP_AND_RNZ, Reason.NOT_TWO_RNZ,
                       Reason.NO_SUCH_POSITION}


def test_rules_refuse_with_reasons() -> None:
    t = matmul()
    assert RULES["map-map flip"].apply(t, 1).reason is Reason.NOT_TWO_MAPS
    assert RULES["map-rnz exchange"].apply(t, 0).reason is Reason.NOT_MAP_AND_RNZ
    assert RULES["rnz-rnz exchange"].apply(t, 1).reason is Reason.NOT_TWO_RNZ
    assert RULES["map-map flip"].apply(t, 2).reason is Reason.NO_SUCH_POSITION
    assert RULES["subdivision"].apply(t, 2, 5).reason is Reason.BLOCK_NOT_DIVISOR
    assert RULES["subdivision"].apply(t, 2).reason is Reason.NO_BLOCK_SIZE
    assert RULES["subdivision"].apply(t, 2, 32).reason is Reason.TRIVIAL_BLOCK
    once = RULES["subdivision"].apply(t, 2, 16)
    assert RULES["subdivision"].apply(once, 2, 4).reason is Reason.ALREADY_SUBDIVIDED
    # eq. 43's side condition: two summed indices, same reducer, associative and commutative
    t2 = contraction_term("ijk,jk->i", (2, 3, 4), (3, 4))
    assert isinstance(RULES["rnz-rnz exchange"].apply(t2, 1), type(t2))
    mixed = replace(t2, reducers=(("j", "max"),))
    refusal = RULES["rnz-rnz exchange"].apply(mixed, 1)
    assert isinstance(refusal, Refusal) and refusal.reason is Reason.DIFFERENT_REDUCERS
    assert "different operators" in str(refusal)
    firsts = replace(t2, reducers=(("j", "first"), ("k", "first")))
    assert RULES["rnz-rnz exchange"].apply(firsts, 1).reason is Reason.NOT_COMMUTATIVE
    # the refused exchange leaves those terms with one arrangement of the two rnz fewer
    assert len(explore(firsts).terms) < len(explore(t2).terms)
    with pytest.raises(KeyError, match="the rules are"):
        apply_rule(t, "nope", 0)
    with pytest.raises(ValueError, match="refused"):
        replay(t, [Step("map-map flip", 1)])


def test_parallel_over_the_outermost_map() -> None:
    t = matmul()
    outer_rnz = apply_rule(apply_rule(t, "map-rnz exchange", 1), "map-rnz exchange", 0)
    assert outer_rnz.order() == ("rnz", "mapA", "mapB")
    # the rnz stays a serial loop around a parallel loop over the map inside it
    assert parallel_refusal(outer_rnz) is None and parallel_level(outer_rnz) == 1
    src = loop_nest(outer_rnz, parallel=True).source
    # one parallel region: each thread runs the rnz over its own range of rows of A
    assert "for chunk in numba.prange(n_chunks):" in src.splitlines()[5]
    assert "for j in range(n_j)" in src and "for i in range((n_i) * chunk // n_chunks" in src
    assert parallel_refusal(t) is None
    assert "numba.prange(n_i)" in loop_nest(t, parallel=True).source
    # a dot product has no map: every iteration accumulates into the one element
    dot = contraction_term("i,i->", (8,), (8,))
    assert "race" in parallel_refusal(dot) and parallel_level(dot) is None
    with pytest.raises(ValueError, match="cannot run in parallel"):
        loop_nest(dot, parallel=True)
    a = np.arange(8.0)
    assert contract(dot, a, a) == a @ a
    b = np.random.default_rng(0).random((32, 5))
    np.testing.assert_allclose(contract(outer_rnz, np.ones((4, 32)), b, parallel=True), np.ones((4, 32)) @ b)


def test_loop_nests_load_fixed_operands_once_and_reassociate_only_inner_sums() -> None:
    t = matmul()
    ijk = apply_rule(t, "map-rnz exchange", 1)          # i j k: A[i, j] is fixed inside k
    src = loop_nest(ijk).source
    assert "a_v = A[i, j]" in src and "C[i, k] += a_v * B[j, k]" in src
    assert not loop_nest(ijk).reassoc and loop_nest(t).reassoc


def test_budget_stops_exploration() -> None:
    r = explore(matmul(), blocks={"j": 16}, budget=Budget(0.0))
    assert not r.complete and r.terms == [matmul()]
    assert not explore(matmul(), max_terms=3).complete


def test_subscripts_errors_say_how_to_fix() -> None:
    assert parse_subscripts("ij,jk") == (("ij", "jk"), "ik")
    with pytest.raises(ValueError, match="two operands"):
        parse_subscripts("ij,jk,kl->il")
    with pytest.raises(ValueError, match="distinct letters"):
        parse_subscripts("ii,ij->j")
    with pytest.raises(ValueError, match="extents"):
        contraction_term("ij,jk->ik", (2, 3), (4, 5))


def test_every_matmul_arrangement_equals_numpy() -> None:
    rng = np.random.default_rng(0)
    t = contraction_term("ij,jk->ik", (3, 8), (8, 5))
    a, b = rng.standard_normal((3, 8)), rng.standard_normal((5, 8)).T   # B a transposed view
    want = a @ b
    terms = explore(t, blocks={"j": 4}).terms
    for u in terms:
        np.testing.assert_allclose(contract(u, a, b), want, rtol=1e-12, atol=1e-12)
    # parallel kernels compile slowly: one with each kind of outer level (A's map, B's map,
    # an rnz around the parallel map), unblocked and blocked
    legal = {u.order()[0] + str(bool(u.blocks)): u for u in terms if parallel_refusal(u) is None}
    assert len(legal) == 6
    for u in legal.values():
        np.testing.assert_allclose(contract(u, a, b, parallel=True), want, rtol=1e-12, atol=1e-12)


@st.composite
def contractions(draw: st.DrawFn) -> tuple[str, tuple[int, ...], tuple[int, ...], str]:
    """Two-operand einsum subscripts with batch, free and summed letters, and a view kind."""
    n = draw(st.integers(2, 4))
    letters = list("ijkl"[:n])
    roles = draw(st.lists(st.sampled_from(["A", "B", "AB"]), min_size=n, max_size=n))
    if not any("A" in r for r in roles):
        roles[0] = "AB"
    if not any("B" in r for r in roles):
        roles[-1] = "AB"
    in_out = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    sa = [c for c, r in zip(letters, roles) if "A" in r]
    sb = [c for c, r in zip(letters, roles) if "B" in r]
    out = [c for c, o in zip(letters, in_out) if o]
    sa, sb, out = (draw(st.permutations(x)) for x in (sa, sb, out))
    ext = {c: draw(st.integers(1, 4)) for c in letters}
    view = draw(st.sampled_from(["contiguous", "transposed", "sliced"]))
    subs = f"{''.join(sa)},{''.join(sb)}->{''.join(out)}"
    return subs, tuple(ext[c] for c in sa), tuple(ext[c] for c in sb), view


def _operand(rng: np.random.Generator, shape: tuple[int, ...], view: str) -> np.ndarray:
    if view == "transposed":
        return rng.standard_normal(shape[::-1]).T
    if view == "sliced":
        return rng.standard_normal(tuple(2 * s for s in shape))[tuple(slice(None, None, 2) for _ in shape)]
    return rng.standard_normal(shape)


@settings(max_examples=4, deadline=None)
@given(contractions(), st.integers(0, 2**32 - 1))
def test_every_arrangement_of_random_contractions_equals_einsum(case, seed) -> None:
    subs, sha, shb, view = case
    rng = np.random.default_rng(seed)
    a, b = _operand(rng, sha, view), _operand(rng, shb, view)
    want = np.einsum(subs, a, b)
    t = contraction_term(subs, a.shape, b.shape)
    terms = explore(t).terms
    even = [lv.index for lv in t.levels if t.extent(lv.index) == 4]
    if even:   # subdivide one index of extent 4 by 2; check a few of those arrangements
        terms += [u for u in explore(t, blocks={even[0]: 2}).terms if u.blocks][:6]
    assert len({u.levels for u in terms}) == len(terms)
    for u in terms:
        np.testing.assert_allclose(contract(u, a, b), want, rtol=1e-12, atol=1e-12)
    outer_map = [u for u in terms if parallel_refusal(u) is None]
    # one with the map outermost, one with rnz loops outside it (each thread a range of it)
    for u in outer_map[:1] + [u for u in outer_map if parallel_level(u)][:1]:
        np.testing.assert_allclose(contract(u, a, b, parallel=True), want, rtol=1e-12, atol=1e-12)


# -- the fusion rules of eq. 19-34 on pipelines ---------------------------------------------

UNARY = [lam("x", ("relu", "x")), lam("x", ("neg", "x")), lam("x", ("sq", "x"))]
BINARY = [lam("a", "b", ("+", "a", "b")), lam("a", "b", ("*", "a", "b")),
          lam("p", "q", ("-", "p", ("*", "q", "p")))]
REDUCERS_FN = [lam("a", "b", ("+", "a", "b")), lam("a", "b", ("max", "a", "b"))]
VECTORS = [Arr("u"), Arr("v"), Arr("w")]


def _vectors() -> st.SearchStrategy:
    return st.recursive(
        st.sampled_from(VECTORS),
        lambda inner: st.one_of(
            st.builds(lambda f, x: NZip(f, (x,)), st.sampled_from(UNARY), inner),
            st.builds(lambda f, x, y: NZip(f, (x, y)), st.sampled_from(BINARY), inner, inner)),
        max_leaves=4)


def _reduces() -> st.SearchStrategy:
    return st.one_of(
        st.builds(Reduce, st.sampled_from(REDUCERS_FN), _vectors()),
        st.builds(lambda r, f, x, y: Rnz(r, f, (x, y)), st.sampled_from(REDUCERS_FN),
                  st.sampled_from(BINARY), _vectors(), _vectors()))


def _pipelines() -> st.SearchStrategy:
    same = st.builds(lambda f, g, x: Pair((NZip(f, (x,)), NZip(g, (x,)))),
                     st.sampled_from(UNARY), st.sampled_from(UNARY), _vectors())
    return st.one_of(_vectors(), _reduces(), st.builds(lambda a, b: Pair((a, b)), _vectors(), _vectors()),
                     st.builds(lambda a, b: Pair((a, b)), _reduces(), _reduces()), same)


def _flat(v) -> list[np.ndarray]:
    return [x for item in v for x in _flat(item)] if isinstance(v, tuple) else [np.asarray(v)]


@settings(max_examples=40, deadline=None)
@given(_pipelines(), st.integers(0, 2**32 - 1))
def test_every_fusion_rule_preserves_the_value(term, seed) -> None:
    rng = np.random.default_rng(seed)
    env = {a.name: rng.standard_normal(5) for a in VECTORS}
    want = _flat(evaluate(term, env))
    for path in positions(term):
        for rule in PIPELINE_RULES.values():
            for param in (range(4) if rule.takes_param else [None]):
                new = rule.apply(term, path, param)
                if isinstance(new, Refusal):
                    assert isinstance(new.reason, Reason)
                    continue
                got = _flat(evaluate(new, env))
                assert len(got) == len(want)
                for g, w in zip(got, want):
                    np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


def test_eq1_fuses_into_one_rnz_of_four_vectors() -> None:
    a, b, u, v = (Arr(n) for n in "abuv")
    plus, times = BINARY[0], BINARY[1]
    t = Reduce(REDUCERS_FN[0], NZip(times, (NZip(plus, (a, b)), NZip(plus, (v, u)))))
    t = apply_pipeline_rule(t, "reduce of zip", ())
    t = apply_pipeline_rule(t, "rnz absorption", (), 0)
    t = apply_pipeline_rule(t, "rnz absorption", (), 2)
    assert isinstance(t, Rnz) and t.args == (a, b, v, u)
    # ncomp renames the composed lambda's parameters apart from the ones already there
    assert str(t) == "rnz (+) (\\a1 b1 a b2 -> (a1 + b1) * (a + b2)) a b v u"
    rng = np.random.default_rng(1)
    env = {n: rng.standard_normal(6) for n in "abuv"}
    assert np.isclose(evaluate(t, env), np.dot(env["a"] + env["b"], env["v"] + env["u"]))


def test_fusion_rules_refuse_with_reasons() -> None:
    u, v = Arr("u"), Arr("v")
    m = NZip(UNARY[0], (u,))
    assert apply_pipeline_rule(m, "map-map fusion", ()).reason is Reason.NOT_MAP_OF_MAP
    assert apply_pipeline_rule(m, "nzip fusion", (), 0).reason is Reason.NOT_NZIP_ARGUMENT
    assert apply_pipeline_rule(m, "nzip fusion", (), 3).reason is Reason.NO_SUCH_ARGUMENT
    assert apply_pipeline_rule(m, "rnz absorption", (), 0).reason is Reason.NOT_RNZ
    assert apply_pipeline_rule(m, "reduce of zip", ()).reason is Reason.NOT_REDUCE_OF_NZIP
    assert apply_pipeline_rule(m, "map-map fusion", (0, 0)).reason is Reason.NO_SUCH_POSITION
    pair = Pair((m, NZip(BINARY[0], (u, v))))
    assert apply_pipeline_rule(pair, "map product", ()).reason is Reason.ARITY_MISMATCH
    assert apply_pipeline_rule(Pair((m, NZip(UNARY[1], (v,)))), "fan-out", ()).reason \
        is Reason.DIFFERENT_ARGUMENTS
    assert apply_pipeline_rule(pair, "reduce product", ()).reason is Reason.NOT_PAIR_OF_REDUCES
    fanned = apply_pipeline_rule(Pair((m, NZip(UNARY[1], (u,)))), "fan-out", ())
    assert str(fanned) == "map (fanOut (\\x -> relu x) (\\x -> neg x)) u"
    # a fan-out function is not a lambda: ncomp refuses to compose it
    outer = NZip(UNARY[2], (fanned,))
    assert apply_pipeline_rule(outer, "map-map fusion", ()).reason is Reason.NOT_A_LAMBDA
    with pytest.raises(KeyError, match="fusion rules are"):
        apply_pipeline_rule(m, "nope", ())


def test_an_innermost_block_rnz_is_unrolled_with_a_tile_of_a_in_locals() -> None:
    t = contraction_term("ij,jk->ik", (8, 64), (64, 5))
    best = next(u for u in explore(t, blocks={"j": 16}).terms
                if [lv.name() for lv in u.levels] == ["j_o", "i", "k", "j_i"])   # Table 2's best order
    src = loop_nest(best).source
    # the loop over j_i is gone; k is the innermost loop, over rows of B and C
    assert "for j_i" not in src and src.splitlines()[-17].strip() == "for k in range(n_k):"
    assert all(f"a_v{e} = A[i, j_o * 16 + {e}]" in src for e in range(16))
    assert "+ a_v15 * B[j_o * 16 + 15, k])" in src
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((8, 64)), rng.standard_normal((64, 5))
    np.testing.assert_allclose(contract(best, a, b), a @ b, rtol=1e-12, atol=1e-12)
    # a block larger than MAX_UNROLL stays a loop
    big = contraction_term("ij,jk->ik", (2, 64), (64, 2))
    u = apply_rule(big, "subdivision", 2, 32)
    assert "for j_i in range(32)" in loop_nest(u).source


def test_index_letters_named_like_the_arrays_do_not_hide_them() -> None:
    t = contraction_term("Ab,bC->AC", (3, 4), (4, 2))
    assert loop_nest(t).source.startswith("def kernel(A_, B_, C_):")
    rng = np.random.default_rng(1)
    a, b = rng.random((3, 4)), rng.random((4, 2))
    for u in explore(t, blocks={"b": 2}).terms:
        np.testing.assert_allclose(contract(u, a, b), a @ b, rtol=1e-12)
