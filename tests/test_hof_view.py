"""The contraction explorer's data (fusionlab.explore.hof.view): arrangements, edges, refusals, timings."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from fusionlab.explore.hof.contraction import contraction_term
from fusionlab.explore.hof.explore import Step, replay
from fusionlab.explore.hof.rules import RULES, Reason, apply_rule
from fusionlab.explore.hof.view import default_blocks, get_contraction_data, time_arrangements


def _loops_of_permutations(letters: str, split: str = "") -> set[tuple[str, ...]]:
    """Every loop order, computed without the rules: permutations of the loop variables."""
    names = [c for c in letters if c != split] + ([f"{split}_o", f"{split}_i"] if split else [])
    return set(itertools.permutations(names))


def test_counts_equal_the_permutations_of_the_loops() -> None:
    d = get_contraction_data("ij,jk->ik", (4, 32), (32, 5))
    assert len(d["terms"]) == 6 and d["complete"]
    assert {tuple(t["loops"]) for t in d["terms"]} == _loops_of_permutations("ijk")
    d16 = get_contraction_data("ij,jk->ik", (4, 32), (32, 5), blocks={"j": 16})
    loops = {tuple(t["loops"]) for t in d16["terms"]}
    assert len(d16["terms"]) == 30 == 6 + 24
    assert loops == _loops_of_permutations("ijk") | _loops_of_permutations("ijk", "j")
    assert [t["id"] for t in d16["terms"]] == list(range(30)) and d16["start"] == 0
    # a batched product: 4 loops, no subdivision
    db = get_contraction_data("bij,bjk->bik", (2, 3, 4), (2, 4, 5))
    assert {tuple(t["loops"]) for t in db["terms"]} == _loops_of_permutations("bijk")


def _start(d: dict):
    return contraction_term(d["subscripts"], tuple(d["shapes"][0]), tuple(d["shapes"][1]))


def _term_at(d: dict, k: int):
    steps = [Step(s["rule"], s["position"], s["param"]) for s in d["terms"][k]["derivation"]]
    return replay(_start(d), steps)


def test_every_edge_replays_to_its_target_and_every_derivation_to_its_term() -> None:
    d = get_contraction_data("ij,jk->ik", (4, 32), (32, 5), blocks={"j": 16})
    terms = [_term_at(d, k) for k in range(len(d["terms"]))]
    for k, t in enumerate(terms):
        assert str(t) == d["terms"][k]["text"]
        assert [lv.name() for lv in t.levels] == d["terms"][k]["loops"]
    assert len({t["text"] for t in d["terms"]}) == 30
    for e in d["edges"]:
        new = apply_rule(terms[e["source"]], e["rule"], e["position"], e["param"])
        assert new == terms[e["target"]]
        assert e["equation"] == RULES[e["rule"]].equation
    # the graph is connected both ways: every swap has its inverse edge
    pairs = {(e["source"], e["target"]) for e in d["edges"] if e["rule"] != "subdivision"}
    assert all((b, a) in pairs for a, b in pairs)
    # every term but the start is the target of its derivation's last step
    assert all(t["derivation"] for t in d["terms"][1:]) and d["terms"][0]["derivation"] == []


def test_refusals_carry_reasons_at_each_position() -> None:
    d = get_contraction_data("ij,jk->ik", (4, 32), (32, 5), blocks={"j": 16})
    start_refusals = {(r["rule"], r["position"]): r for r in d["refusals"] if r["term"] == 0}
    # i k j: levels 1-2 are a map and an rnz, not two maps; 0-1 are not an rnz pair
    assert start_refusals[("map-map flip", 1)]["reason"] == "NOT_TWO_MAPS"
    assert start_refusals[("rnz-rnz exchange", 0)]["message"] == Reason.NOT_TWO_RNZ.value
    for r in d["refusals"]:
        assert Reason[r["reason"]].value == r["message"]
        got = apply_rule(_term_at(d, r["term"]), r["rule"], r["position"], r["param"])
        assert got.reason.name == r["reason"]
    # no position outside the nest is offered; subdivision of an index with no block size is
    # not tried, and a subdivided index refuses a second subdivision
    assert all(r["reason"] != "NO_SUCH_POSITION" for r in d["refusals"])
    assert any(r["reason"] == "ALREADY_SUBDIVIDED" for r in d["refusals"])
    # a block that does not divide is refused with its reason, not silently dropped
    d5 = get_contraction_data("ij,jk->ik", (4, 30), (30, 5), blocks={"j": 4})
    assert {r["reason"] for r in d5["refusals"] if r["rule"] == "subdivision"} == {"BLOCK_NOT_DIVISOR"}
    assert len(d5["terms"]) == 6


def test_parallel_and_nests_as_data() -> None:
    d = get_contraction_data("i,i->", (8,), (8,))
    assert len(d["terms"]) == 1 and not d["terms"][0]["parallel"]
    assert "race" in d["terms"][0]["parallel_reason"]
    m = get_contraction_data("ij,jk->ik", (4, 32), (32, 5))
    assert all(t["parallel"] and t["parallel_reason"] is None for t in m["terms"])
    assert all(t["nest"].startswith("def kernel(A, B, C):") for t in m["terms"])
    json.dumps(m)  # plain data


def test_bad_input_says_how_to_fix() -> None:
    with pytest.raises(ValueError, match="its indices are"):
        get_contraction_data("ij,jk->ik", (4, 32), (32, 5), blocks={"z": 16})
    with pytest.raises(ValueError, match="integer >= 2"):
        get_contraction_data("ij,jk->ik", (4, 32), (32, 5), blocks={"j": 1})
    with pytest.raises(ValueError, match="two operands"):
        get_contraction_data("ij->i", (4, 32), (32, 5))


def test_default_blocks_subdivide_the_first_summed_index_when_they_divide() -> None:
    assert default_blocks("ij,jk->ik", (64, 32), (32, 8)) == {"j": 16}
    assert default_blocks("bij,bkj->bik", (2, 3, 48), (2, 5, 48)) == {"j": 16}
    assert default_blocks("ij,jk->ik", (64, 24), (24, 8)) == {}
    assert default_blocks("i,j->ij", (4,), (5,)) == {}


def test_timings_check_every_arrangement_against_numpy() -> None:
    d = get_contraction_data("ij,jk->ik", (6, 32), (32, 5), blocks={"j": 16})
    t = time_arrangements(d, repeat=1, parallel=False)
    assert [r["term"] for r in t["records"]] == list(range(30))
    assert all(r["max_relative_error"] < 1e-12 and r["serial_seconds"] > 0 for r in t["records"])
    assert t["numpy_seconds"] > 0 and all(r["parallel_seconds"] is None for r in t["records"])
    assert [r["loops"] for r in t["records"]] == [x["loops"] for x in d["terms"]]


CONTRACT_PROGRAM = ("ARRAY A float64[4,32]\nARRAY B float64[32,5]\nARRAY C float64[4,5]\nARRAY D float64[3,4,6]\n"
                    "ARRAY E float64[3,6,2]\nARRAY F float64[3,4,2]\nRANDOM A, seed=1\nRANDOM B, seed=2\n"
                    "RANDOM D, seed=3\nRANDOM E, seed=4\n"
                    'CONTRACT C, A, B, subscripts="ij,jk->ik"\nCONTRACT F, D, E, subscripts="bij,bjk->bik"\n'
                    "SYNC C\nSYNC F\n")


def test_report_has_a_contractions_section_that_validates() -> None:
    import copy

    import jsonschema

    from fusionlab.explore.report import get_report, validate_report
    from fusionlab.ir.text import parse

    r = get_report(parse(CONTRACT_PROGRAM), algorithms=["linear"], cost_models=["bohrium"])
    validate_report(r)
    c1, c2 = r["contractions"]
    assert (c1["n"], c1["output"], c1["operands"], c1["subscripts"]) == (5, "C", ["A", "B"], "ij,jk->ik")
    assert c1["shapes"] == [[4, 32], [32, 5]] and c1["dtype"] == "float64" and c1["blocks"] == {"j": 16}
    assert len(c1["terms"]) == 30 and c1["timings"] is None
    # four loops: not subdivided in a report (5! + 4! terms would not embed), all 4! orders
    assert c2["blocks"] == {} and len(c2["terms"]) == 24 and c2["complete"]
    assert len(json.dumps(r["contractions"])) < 300_000
    # a program without contractions has no section (older views and golden reports unchanged)
    plain = get_report(parse("ARRAY A float64[4]\nRANDOM A, seed=1\nSYNC A\n"), algorithms=["linear"],
                       cost_models=["bohrium"])
    assert "contractions" not in plain
    bad = copy.deepcopy(r)
    bad["contractions"][0]["edges"][0]["target"] = "x"
    with pytest.raises(jsonschema.ValidationError):
        validate_report(bad)


@settings(max_examples=5, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_every_arrangement_of_random_small_contractions_equals_numpy(seed: int) -> None:
    """Random subscripts (batch, free and summed letters) and extents; every term's nest from
    the data layer, run on transposed / strided operands, equals np.einsum."""
    from fusionlab.explore.hof.loopnest import contract

    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 5))
    letters = list("ijkl"[:n])
    roles = [str(rng.choice(["A", "B", "AB"])) for _ in letters]
    roles[0] = roles[0] if any("A" in r for r in roles) else "AB"
    roles[-1] = roles[-1] if any("B" in r for r in roles) else "AB"
    sa = [c for c, r in zip(letters, roles) if "A" in r]
    sb = [c for c, r in zip(letters, roles) if "B" in r]
    out = [c for c in letters if rng.random() < 0.5]
    sa, sb, out = (list(rng.permutation(x)) if x else [] for x in (sa, sb, out))
    ext = {c: int(rng.integers(1, 5)) for c in letters}
    subs = f"{''.join(sa)},{''.join(sb)}->{''.join(out)}"
    shape_a, shape_b = tuple(ext[c] for c in sa), tuple(ext[c] for c in sb)
    d = get_contraction_data(subs, shape_a, shape_b, blocks={c: 2 for c in letters[:1] if ext[c] == 4})
    assert len({tuple(t["loops"]) for t in d["terms"]}) == len(d["terms"])
    a = rng.standard_normal(shape_a[::-1]).T                       # a transposed view
    b = rng.standard_normal(tuple(2 * s for s in shape_b))[tuple(slice(None, None, 2) for _ in shape_b)]
    want = np.einsum(subs, a, b)
    for k in range(len(d["terms"])):
        got = contract(_term_at(d, k), a, b)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, err_msg=f"{subs} {d['terms'][k]['loops']}")


def test_report_shares_one_entry_per_distinct_contraction_and_caps_them() -> None:
    from fusionlab.explore.hof.view import MAX_REPORT_CONTRACTIONS, get_program_contractions
    from fusionlab.ir.text import parse

    decl = "ARRAY A float64[4,32]\nARRAY B float64[32,5]\nARRAY C float64[4,5]\n"
    same = decl + 'CONTRACT C, A, B, subscripts="ij,jk->ik"\n' * 3
    (entry,) = get_program_contractions(parse(same))
    assert entry["instructions"] == [1, 2, 3] and entry["n"] == 1
    # ten distinct shapes: the first MAX_REPORT_CONTRACTIONS are described
    text = "".join(f"ARRAY X{k} float64[{k + 1},3]\nARRAY Y{k} float64[3,2]\nARRAY Z{k} float64[{k + 1},2]\n"
                   for k in range(10))
    text += "".join(f'CONTRACT Z{k}, X{k}, Y{k}, subscripts="ij,jk->ik"\n' for k in range(10))
    got = get_program_contractions(parse(text))
    assert len(got) == MAX_REPORT_CONTRACTIONS == 8 and [e["n"] for e in got] == list(range(1, 9))
