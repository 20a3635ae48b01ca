"""The contraction view: its widgets (apply, undo, structure), the explorer's tab, escaping."""

from __future__ import annotations

import copy

import pytest

from fusionlab.explore.hof.view import get_contraction_data
from fusionlab.explore.jupyter.contraction import ContractionView, show_contraction
from fusionlab.explore.viz.contraction import applicable, contraction_chart_svg, path_html, term_html


CONTRACT_PROGRAM = ("ARRAY A float64[4,32]\nARRAY B float64[32,5]\nARRAY C float64[4,5]\nARRAY D float64[3,4,6]\n"
                    "ARRAY E float64[3,6,2]\nARRAY F float64[3,4,2]\nRANDOM A, seed=1\nRANDOM B, seed=2\n"
                    "RANDOM D, seed=3\nRANDOM E, seed=4\n"
                    'CONTRACT C, A, B, subscripts="ij,jk->ik"\nCONTRACT F, D, E, subscripts="bij,bjk->bik"\n'
                    "SYNC C\nSYNC F\n")


@pytest.fixture(scope="module")
def data() -> dict:
    return get_contraction_data("ij,jk->ik", (4, 32), (32, 5), blocks={"j": 16})


def test_children_are_term_rules_undo_derivation_nest_and_chart(data) -> None:
    v = ContractionView(data)
    kids = v.widget.children
    assert kids[0] is v.title and kids[1] is v.term and kids[3] is v.rules
    assert v.undo_button in kids[4].children and v.reset_button in kids[4].children
    assert kids[5] is v.refusals and kids[6] is v.derivation and kids[8] is v.nest and kids[10] is v.chart
    # one button per rule that applies at the start (i k j): flip, exchange, subdivision
    assert [b.description for b in v.rules.children] == [
        "map-map flip at level 0", "map-rnz exchange at level 1", "subdivision at level 2 by 16"]
    assert v.undo_button.disabled and "for j in range(n_j)" in v.nest.value
    assert "NOT_TWO_MAPS" not in v.refusals.value and "the two levels are not both maps" in v.refusals.value
    assert v.chart.value == ""  # not timed


def test_apply_and_undo_round_trip(data) -> None:
    v = ContractionView(data)
    start_term, start_nest = v.term.value, v.nest.value
    v.rules.children[1].click()                                   # map-rnz exchange at level 1
    assert v.loops() == ["i", "j", "k"] and v.term.value != start_term
    assert "a_v = A[i, j]" in v.nest.value and not v.undo_button.disabled
    v.apply("subdivision", 1, 16)
    assert v.loops() == ["i", "j_o", "j_i", "k"]
    assert "map-rnz exchange at level 1 (eq. 42)" in v.derivation.value
    assert v.derivation.value.count("<li>") == 3
    with pytest.raises(ValueError, match="refused here: the index is already subdivided"):
        v.apply("subdivision", 1, 16)
    with pytest.raises(ValueError, match="not a move of this term"):
        v.apply("subdivision", 0, 3)
    v.undo_button.click()
    v.undo()
    assert v.loops() == ["i", "k", "j"] and v.term.value == start_term and v.nest.value == start_nest
    assert v.undo_button.disabled and v.undo().current == 0
    v.apply("map-map flip", 0).reset()
    assert v.path == [0] and v.steps == []


def test_every_edge_is_a_button_that_reaches_its_target(data) -> None:
    v = ContractionView(data)
    for k in range(len(data["terms"])):
        v.path, v.steps = [k], []
        v._draw()
        for e, b in zip(applicable(data, k), v.rules.children):
            b.click()
            assert v.current == e["target"] and v.loops() == data["terms"][e["target"]]["loops"]
            v.undo()


def test_text_from_data_is_escaped(data) -> None:
    evil = copy.deepcopy(data)
    evil["operands"] = ["<img src=x onerror=alert(1)>", "B"]
    evil["output"] = "C"
    evil["terms"][0]["text"] = "<script>alert(1)</script>"
    evil["terms"][0]["nest"] = "</pre><script>x</script>"
    evil["refusals"][0]["message"] = "<b>bold</b>"
    v = ContractionView(evil)
    html = v.title.value + v.term.value + v.nest.value + v.refusals.value + v.derivation.value
    assert "<script>" not in html and "<img" not in html and "<b>bold" not in html
    assert "&lt;script&gt;" in html and "&lt;img" in html
    assert "<script>" not in term_html(evil, 0) + path_html(evil, [0], [])


def test_timed_view_draws_every_arrangement_and_numpy() -> None:
    shown = []
    v = show_contraction("ij,j->i", (8, 4), (4,), timed=True, repeat=1, display=shown.append)
    assert shown == [v.widget] and v.data["blocks"] == {}
    assert len(v.data["timings"]["records"]) == 2
    svg = v.chart.value
    assert svg.startswith("<svg") and "<script" not in svg
    assert contraction_chart_svg({**v.data, "timings": None}) == ""


def test_explorer_has_a_contractions_tab_only_with_contractions() -> None:
    from fusionlab.ir.examples import fig3
    from fusionlab.explore.jupyter.explorer import Explorer
    from fusionlab.explore.jupyter.session import FuseResult
    from fusionlab.ir.text import parse

    quiet = {"display": lambda obj, **kw: None}
    ex = Explorer(FuseResult.from_program(parse(CONTRACT_PROGRAM), algorithms=["linear"]), **quiet)
    assert ex.tabs.get_title(len(ex.tabs.children) - 1) == "Contractions"
    pick, slot = ex.tabs.children[-1].children
    assert [v for _, v in pick.options] == [0, 1] and "bij,bjk->bik" in pick.options[1][0]
    assert slot.children == (ex.contraction_views[0].widget,)
    pick.value = 1
    assert slot.children == (ex.contraction_views[1].widget,)
    assert ex.contraction_views[1].loops() == ["b", "i", "k", "j"]
    plain = Explorer(FuseResult.from_program(fig3(), algorithms=["linear"]), **quiet)
    assert len(plain.tabs.children) == 6 and not plain.contraction_views


def test_the_contractions_tab_follows_the_batch() -> None:
    from fusionlab.explore.jupyter.explorer import Explorer
    from fusionlab.explore.jupyter.session import FuseResult
    from fusionlab.ir.text import parse

    plain = parse("ARRAY x float64[4]\nRANDOM x, seed=1\nSYNC x\n")
    res = FuseResult([plain, parse(CONTRACT_PROGRAM)], algorithms=["linear"])
    ex = Explorer(res, display=lambda obj, **kw: None)
    assert res.batch == 1 and len(ex.tabs.children) == 7 and len(ex.contraction_views) == 2
    ex.batch.value = 0
    assert len(ex.tabs.children) == 6 and ex.contraction_views == []
    ex.batch.value = 1
    assert ex.tabs.get_title(6) == "Contractions" and ex.contraction_views[0].loops() == ["i", "k", "j"]


def test_the_static_fallback_shows_each_contraction_escaped(data) -> None:
    from fusionlab.explore.report import get_report
    from fusionlab.ir.text import parse
    from fusionlab.explore.viz.fallback import fallback_html

    r = get_report(parse(CONTRACT_PROGRAM), algorithms=["linear"], cost_models=["bohrium"])
    html = fallback_html(r)
    assert html.count("<h4>Contraction: ") == 2 and "30 arrangements reachable" in html
    assert "24 arrangements reachable" in html and "acc += A[i, j] * B[j, k]" in html
    r["contractions"][0]["terms"][0]["text"] = "<script>x</script>"
    assert "<script>" not in fallback_html(r)


def test_title_names_every_instruction_of_a_shared_entry(data) -> None:
    from fusionlab.explore.viz.contraction import contraction_title

    one = {**data, "n": 5, "instructions": [5], "output": "C", "operands": ["A", "B"]}
    assert contraction_title(one) == 'instruction 5: C = einsum("ij,jk->ik", A, B): A 4x32, B 32x5, float64'
    assert contraction_title({**one, "instructions": [5, 9]}).startswith("instructions 5, 9: C = einsum")


def test_timing_in_the_explorer_tab_goes_into_the_report() -> None:
    from fusionlab.explore.jupyter.explorer import Explorer
    from fusionlab.explore.jupyter.session import FuseResult
    from fusionlab.explore.report import MIME_TYPE, validate_report
    from fusionlab.ir.text import parse

    p = parse("ARRAY M float64[8,4]\nARRAY x float64[4]\nARRAY y float64[8]\nRANDOM M, seed=1\n"
              'RANDOM x, seed=2\nCONTRACT y, M, x, subscripts="ij,j->i"\nSYNC y\n')
    shown = []
    ex = Explorer(FuseResult.from_program(p, algorithms=["linear"]), display=lambda obj, **kw: shown.append(obj))
    ex.show()
    view = ex.contraction_views[0]
    view.repeat = 1
    before = len(shown)
    view.time_button.click()
    assert view.chart.value.startswith("<svg") and len(shown) > before
    report = ex.displayed[MIME_TYPE]
    validate_report(report)
    timings = report["contractions"][0]["timings"]
    assert [r["loops"] for r in timings["records"]] == [["i", "j"], ["j", "i"]]
    assert all(r["parallel_seconds"] is not None for r in timings["records"])
