"""The explorer's report: schema, contents checked against the algorithms, safe views."""

from __future__ import annotations

import json

import jsonschema
import pytest
from hypothesis import given, settings

from fusionlab import parse
from fusionlab.examples import fig3, random_program
from fusionlab.partition import partition
from fusionlab.report import MIME_TYPE, get_report, get_schema, validate_report
from fusionlab.viz.charts import cost_chart_svg, timing_chart_svg
from fusionlab.viz.listing import code_html, cost_table_html, find_partition, listing_html
from fusionlab.viz.svg import SvgUnavailable, render_svg
from fusionlab.viz.tree import tree_svg, tree_summary

from strategies import programs

HOSTILE = """\
ARRAY a float64[4]
ARRAY b float64[4]
COPY a, 1
OPAQUE b, a, name="<script>window.__pwned=1</script><img src=x onerror=alert(1)>"
SYNC b
"""


@pytest.fixture(scope="module")
def fig3_report() -> dict:
    return get_report(fig3())


def test_fig3_report_holds_every_partition(fig3_report: dict) -> None:
    validate_report(fig3_report)
    assert MIME_TYPE == "application/vnd.fusionlab.explorer+json"
    assert fig3_report["version"] == 1
    assert len(fig3_report["partitions"]) == 6 * 4
    greedy = find_partition(fig3_report, "greedy", "bohrium")
    assert (greedy["cost"], greedy["cost_elements"], len(greedy["blocks"])) == (304, 38, 4)
    optimal = find_partition(fig3_report, "optimal", "bohrium")
    assert optimal["proven_optimal"] and optimal["cost_elements"] == 38
    assert find_partition(fig3_report, "singleton", "bohrium")["cost_elements"] == 94
    # every partition's numbers equal the algorithm run on its own
    for entry in fig3_report["partitions"]:
        r = partition(fig3(), entry["algorithm"], entry["cost_model"], **(
            {"time_limit": 2.0, "max_nodes": 20_000} if entry["algorithm"] == "optimal" else {}))
        assert entry["cost"] == pytest.approx(r.cost)
        assert entry["blocks"] == r.numbered()
        assert len(entry["contracted"]) == len(entry["blocks"])
    # selected partition: code per block; the trace is optimal's under the selected model
    assert fig3_report["selected"] == {"algorithm": "greedy", "cost_model": "bohrium"}
    assert sorted(c["block"] for c in fig3_report["code"]) == [1, 2, 3, 4]
    assert fig3_report["trace"]["cost_model"] == "bohrium"
    assert fig3_report["trace"]["explored"] == len(fig3_report["trace"]["nodes"])


def test_report_shares_dot_between_equal_partitions(fig3_report: dict) -> None:
    dots = fig3_report["dots"]
    by_blocks: dict[str, int] = {}
    for p in fig3_report["partitions"]:
        key = json.dumps([p["blocks"], p["cost_model"]])  # weight edges depend on the model
        assert by_blocks.setdefault(key, p["dot"]) == p["dot"]
    assert len(set(dots)) == len(dots) <= len(by_blocks)  # identical texts stored once
    greedy = find_partition(fig3_report, "greedy", "bohrium")
    assert dots[greedy["dot"]].count("subgraph cluster_") == 4


@settings(max_examples=25, deadline=None)
@given(programs(max_size=7))
def test_weight_edges_are_exactly_the_legal_saving_merges(program) -> None:
    from fusionlab.dot import weight_edges
    from fusionlab.partition import evaluate

    for model in ("bohrium", "max_locality"):
        r = partition(program, "linear", model)
        listed = {(a, b): s for a, b, s in weight_edges(r)}
        blocks = [list(b) for b in r.blocks]
        for a in range(len(blocks)):
            for b in range(a + 1, len(blocks)):
                merged = [blk for k, blk in enumerate(blocks) if k not in (a, b)] + [blocks[a] + blocks[b]]
                m = evaluate(program, merged, model)
                saves = r.cost - m.cost
                if m.legal and saves > 1e-9:
                    assert listed.pop((a, b)) == pytest.approx(saves)
        assert listed == {}


def test_fig3_contracted_arrays_follow_def_10(fig3_report: dict) -> None:
    greedy = find_partition(fig3_report, "greedy", "bohrium")
    # greedy fuses 1,2,5-9,12,13 into one block: A, B created there? A and B are written
    # first by COPY (new) and freed (DEL) in the block, never synced: contracted
    block = greedy["blocks"].index([1, 2, 5, 6, 7, 8, 9, 12, 13])
    assert set(greedy["contracted"][block]) == {"A", "B"}


def test_schema_rejects_a_broken_report(fig3_report: dict) -> None:
    bad = json.loads(json.dumps(fig3_report))
    bad["partitions"][0]["blocks"] = [[0]]  # instruction numbers start at 1
    with pytest.raises(jsonschema.ValidationError):
        validate_report(bad)
    bad = json.loads(json.dumps(fig3_report))
    del bad["program"]
    with pytest.raises(jsonschema.ValidationError):
        validate_report(bad)
    assert get_schema()["properties"]["version"] == {"const": 1}


@settings(max_examples=15, deadline=None)
@given(programs(max_size=8))
def test_random_programs_make_valid_reports(program) -> None:
    r = get_report(program, algorithms=["singleton", "greedy", "optimal"], cost_models=["bohrium", "robinson"])
    validate_report(r)
    for entry in r["partitions"]:
        covered = sorted(n for b in entry["blocks"] for n in b)
        assert covered == list(range(1, len(program) + 1))


def test_large_program_report_has_no_dot_but_validates() -> None:
    program = random_program(400, seed=3)
    r = get_report(program, algorithms=["linear"], cost_models=["bohrium"])
    validate_report(r)
    assert r["partitions"][0]["dot"] is None and r["dots"] == []


def test_views_escape_everything_from_the_data() -> None:
    r = get_report(parse(HOSTILE), algorithms=["singleton", "greedy"], cost_models=["bohrium"])
    validate_report(r)
    entry = find_partition(r, "greedy", "bohrium")
    for html in (listing_html(r, entry), cost_table_html(r), code_html(r)):
        assert "<script" not in html and "<img" not in html
    assert "&lt;script&gt;" in listing_html(r, entry)
    svg, _ = render_svg(r["dots"][entry["dot"]])
    assert "<script" not in svg and "<img" not in svg and "onerror=alert" not in svg.replace("onerror=alert(1)&gt;", "")


def test_charts_and_tree_are_svg(fig3_report: dict) -> None:
    assert cost_chart_svg(fig3_report).startswith("<svg")
    timings = {"repeat": 3, "records": [
        {"cost_model": "numpy", "algorithm": "eager", "median_seconds": 0.01, "min_seconds": 0.009, "speedup": 1.0},
        {"cost_model": "bohrium", "algorithm": "greedy", "median_seconds": 0.002, "min_seconds": 0.002, "speedup": 5.0},
    ]}
    assert timing_chart_svg(timings).startswith("<svg")
    trace = partition(fig3(), "optimal", seed_greedy=False).trace.to_dict()
    full = tree_svg(trace, max_nodes=10_000, max_depth=100)
    assert full.count('class="fl-node"') == len(trace["nodes"])
    assert 'data-outcome="new_best"' in full
    # replay: up to step k only the nodes visited so far
    assert tree_svg(trace, step=10).count('class="fl-node"') == 11
    # summarising: a depth limit draws fewer nodes and says how many are left out
    small = tree_svg(trace, max_depth=3, max_nodes=10_000)
    assert small.count('class="fl-node"') < len(trace["nodes"]) and "not drawn" in small
    assert "2 new best" in tree_summary(trace)


def test_svg_without_system_dot(monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    dot = "digraph { a -> b }"
    monkeypatch.setattr(shutil, "which", lambda name: None)
    svg, engine = render_svg(dot)
    assert engine == "wasm" and svg.startswith("<svg")
    with pytest.raises(SvgUnavailable):
        render_svg(dot, engine="dot")
    with pytest.raises(SvgUnavailable, match="more than"):
        render_svg("digraph {" + "".join(f"n{i} [label=x];" for i in range(20)) + "}", max_nodes=5)
