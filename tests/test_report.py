"""The explorer's report: schema, contents checked against the algorithms, safe views."""

from __future__ import annotations

import json

import jsonschema
import pytest
from hypothesis import given, settings

from fusionlab import parse
from fusionlab.ir.examples import fig3, random_program
from fusionlab.partition import partition
from fusionlab.explore.dot import block_graph, get_dot, graph_level
from fusionlab.explore.report import (
    MIME_TYPE, format_cost, get_report, get_schema, unit_label, validate_report,
)
from fusionlab.explore.viz.charts import cost_chart_svg, timing_chart_svg
from fusionlab.explore.viz.listing import code_html, cost_table_html, find_partition, listing_html
from fusionlab.explore.viz.svg import SvgUnavailable, render_svg
from fusionlab.explore.viz.tree import tree_svg, tree_summary

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
    assert fig3_report["version"] == 2
    assert len(fig3_report["partitions"]) == 6 * 4
    assert fig3_report["status"]["complete"] and fig3_report["status"]["phase"] == "done"
    assert fig3_report["status"]["pending"] == [] and not fig3_report["status"]["interrupted"]
    for p in fig3_report["partitions"]:  # exact searches cut by their node limit say so
        cut = p["algorithm"] in ("optimal", "ilp") and not p["proven_optimal"]
        assert p["status"] == ("budget" if cut else "done"), p
        assert p["bound"] is None or cut
    assert "dots" not in fig3_report and all("dot" not in p for p in fig3_report["partitions"])
    assert "digraph" not in json.dumps(fig3_report)  # structure, not drawings
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
    trace = fig3_report["trace"]
    assert len(trace["nodes"]) == trace["recorded"] == min(trace["explored"], 200)  # the default trace limit
    assert trace["truncated"] == (trace["explored"] > 200)
    whole = get_report(fig3(), algorithms=["optimal"], cost_models=["bohrium"], trace_limit=None)["trace"]
    assert len(whole["nodes"]) == whole["explored"] == trace["explored"] and not whole["truncated"]
    assert whole["nodes"][:len(trace["nodes"])] == trace["nodes"]


def test_weights_in_the_report_are_the_partitions_weight_edges(fig3_report: dict) -> None:
    from fusionlab.explore.report import weight_edges

    for p in fig3_report["partitions"]:
        r = partition(fig3(), p["algorithm"], p["cost_model"], **(
            {"time_limit": 2.0, "max_nodes": 20_000} if p["algorithm"] == "optimal" else {}))
        want = [{"a": a + 1, "b": b + 1, "saving": pytest.approx(s)} for a, b, s in weight_edges(r)]
        assert p["weights"] == want and p["weights_total"] == len(want)
    singleton = find_partition(fig3_report, "singleton", "bohrium")
    assert {"a": 1, "b": 5, "saving": 64} in singleton["weights"]  # COPY A + ADD A, A, D[:-1]
    # the palette is the one every view colours with
    assert fig3_report["palette"]["blocks"][0].startswith("#") and set(fig3_report["palette"]["edges"]) == {
        "dependency", "forbidden", "weight", "contracted"}


def test_dot_is_built_from_the_report_data(fig3_report: dict) -> None:
    greedy = find_partition(fig3_report, "greedy", "bohrium")
    dot = get_dot(fig3_report, greedy)
    assert dot.count("subgraph cluster_") == 4 and graph_level(fig3_report, greedy) == "instruction"
    for d in fig3_report["graph"]["dependencies"]:
        assert f"i{d['source']} -> i{d['target']}" in dot
    assert dot.count("style=dashed") == len(fig3_report["graph"]["forbidden"])
    assert fig3_report["palette"]["blocks"][1] in dot
    # block level: one node per block, the edges between two blocks merged with their count
    bg = block_graph(fig3_report, greedy, reduce=False)
    assert [b["size"] for b in bg["blocks"]] == [len(b) for b in greedy["blocks"]]
    block_of = {n: k for k, b in enumerate(greedy["blocks"], 1) for n in b}
    crossing = sum(1 for d in fig3_report["graph"]["dependencies"]
                   if block_of[d["source"]] != block_of[d["target"]])
    assert sum(e["count"] for e in bg["edges"] if e["kind"] == "dependency") == crossing
    block = get_dot(fig3_report, greedy, level="block")
    assert "cluster_" not in block and block.count("block ") >= 4
    svg, _ = render_svg(block)
    assert svg.startswith("<svg")


def test_dense_programs_are_drawn_at_block_level() -> None:
    program = random_program(300, seed=5)
    r = get_report(program, algorithms=["linear"], cost_models=["bohrium"])
    validate_report(r)
    entry = r["partitions"][0]
    assert r["graph"]["edges_total"] >= len(r["graph"]["dependencies"]) + len(r["graph"]["forbidden"])
    level = graph_level(r, entry)
    assert level in ("block", "summary")
    if level == "block":
        dot = get_dot(r, entry)
        assert dot.count("[label=") >= len(entry["blocks"]) and "cluster_" not in dot


@settings(max_examples=25, deadline=None)
@given(programs(max_size=7))
def test_weight_edges_are_exactly_the_legal_saving_merges(program) -> None:
    from fusionlab.explore.report import weight_edges
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
    bad = json.loads(json.dumps(fig3_report))
    bad["partitions"][0]["status"] = "pending"  # a pending entry has no cost
    with pytest.raises(jsonschema.ValidationError):
        validate_report(bad)
    bad = json.loads(json.dumps(fig3_report))
    bad["dots"] = []  # version 2 carries no drawing
    with pytest.raises(jsonschema.ValidationError):
        validate_report(bad)
    assert get_schema()["properties"]["version"] == {"const": 2}


def test_schema_holds_a_profile_and_rejects_a_broken_one(fig3_report: dict) -> None:
    from fusionlab.explore.report import assemble_report, ReportParts
    from fusionlab.pipeline.profiling import BlockRuns, Ceilings, KernelTiming, Profile

    assert fig3_report["profile"] is None   # none until one is made
    blocks = (KernelTiming(1, 1, (1, 2), BlockRuns.KERNEL, True, 2e-3, 1e-3, 8000, 8000, 2000, "memory", "ADD"),
              KernelTiming(1, 2, (3,), BlockRuns.OPAQUE, False, 1e-3, None, 0, 0, 0, None, "np.sort"))
    profile = Profile(blocks, 4e-3, 1e-3, Ceilings(3e10, 1e11, 5e10, "test"), 3, numpy_seconds=1e-3,
                      algorithm="greedy", cost_model="bohrium").to_dict()
    with_profile = dict(fig3_report, profile=profile)
    validate_report(with_profile)
    assert [w["reason"] for w in profile["why_slower"]] == ["small_arrays", "opaque_calls", "driver_overhead"]
    parts = ReportParts.of(fig3())
    assembled = assemble_report(parts, algorithms=["greedy"], cost_models=["bohrium"], selected=("greedy", "bohrium"),
                                profile=profile)
    assert assembled["profile"] == profile
    for path, value in ((("kernels", 0, "runs"), "gpu"), (("kernels", 0, "block"), 0),
                        (("kernels", 0, "bound"), "io"), (("why_slower", 0, "reason"), "slow"),
                        (("ceilings", "memory_bytes_per_second"), 0), (("kernels", 0, "extra"), 1),
                        (("model_error", "median_abs_log_ratio"), -1.0)):
        bad = json.loads(json.dumps(with_profile))
        where = bad["profile"]
        for key in path[:-1]:
            where = where[key]
        where[path[-1]] = value
        with pytest.raises(jsonschema.ValidationError):
            validate_report(bad)
    bad = json.loads(json.dumps(with_profile))
    del bad["profile"]["ceilings"]
    with pytest.raises(jsonschema.ValidationError):
        validate_report(bad)


@settings(max_examples=15, deadline=None)
@given(programs(max_size=8))
def test_random_programs_make_valid_reports(program) -> None:
    r = get_report(program, algorithms=["singleton", "greedy", "optimal"], cost_models=["bohrium", "robinson"])
    validate_report(r)
    for entry in r["partitions"]:
        covered = sorted(n for b in entry["blocks"] for n in b)
        assert covered == list(range(1, len(program) + 1))


def test_large_program_report_validates_and_stays_small() -> None:
    program = random_program(400, seed=3)
    r = get_report(program, algorithms=["linear"], cost_models=["bohrium"])
    validate_report(r)
    assert len(r["program"]["instructions"]) == 400
    assert len(json.dumps(r)) < 1_000_000


def test_costs_and_units_are_said_one_way() -> None:
    assert format_cost(144000016) == "144,000,016" and format_cost(1.44e8) == "144,000,000"
    assert format_cost(-2.0) == "-2" and format_cost(0.3333333) == "0.3333"
    assert unit_label("max_contract") == "arrays not contracted (lower is better)"
    from fusionlab.costs import get_cost_model

    assert unit_label(get_cost_model("max_contract")) == unit_label("max_contract")
    r = get_report(fig3(), algorithms=["singleton", "greedy"], cost_models=["max_contract"])
    assert {p["unit"] for p in r["partitions"]} == {"arrays not contracted (lower is better)"}
    assert "arrays not contracted (lower is better)" in cost_table_html(r)
    big = get_report(fig3(), algorithms=["singleton"], cost_models=["bohrium"])
    assert "752" in cost_table_html(big) and "7.52e" not in cost_table_html(big)


def test_views_escape_everything_from_the_data() -> None:
    r = get_report(parse(HOSTILE), algorithms=["singleton", "greedy"], cost_models=["bohrium"])
    validate_report(r)
    entry = find_partition(r, "greedy", "bohrium")
    for html in (listing_html(r, entry), cost_table_html(r), code_html(r)):
        assert "<script" not in html and "<img" not in html
    assert "&lt;script&gt;" in listing_html(r, entry)
    svg, _ = render_svg(get_dot(r, entry))
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


def _closure(arcs: set, n: int) -> set:
    reach = {v: set() for v in range(1, n + 1)}
    changed = True
    while changed:  # small graphs: a fixed point in at most n rounds
        changed = False
        for a, b in arcs:
            new = {b} | reach[b]
            if not new <= reach[a]:
                reach[a] |= new
                changed = True
    return {(a, b) for a in reach for b in reach[a]}


@settings(max_examples=25, deadline=None)
@given(programs(max_size=12))
def test_block_level_drops_only_implied_dependencies(program) -> None:
    for algorithm in ("singleton", "linear"):
        r = get_report(program, algorithms=[algorithm], cost_models=["bohrium"])
        entry = r["partitions"][0]
        full = block_graph(r, entry, reduce=False)
        reduced = block_graph(r, entry)
        every = {(e["a"], e["b"]) for e in full["edges"] if e["kind"] == "dependency"}
        kept = {(e["a"], e["b"]) for e in reduced["edges"] if e["kind"] == "dependency"}
        n = len(entry["blocks"])
        assert kept <= every and len(every) - len(kept) == reduced["implied"]
        assert _closure(kept, n) == _closure(every, n)  # the same order between blocks
        for a, b in kept:  # and none of those kept is implied by another path
            assert (a, b) not in _closure(kept - {(a, b)}, n)
        assert [e for e in reduced["edges"] if e["kind"] == "forbidden"] == \
            [e for e in full["edges"] if e["kind"] == "forbidden"]


def test_trace_is_capped_in_bytes_too() -> None:
    from fusionlab.explore.report import trace_data

    r = partition(fig3(), "optimal", seed_greedy=False)
    whole = trace_data(r, None)
    edges = len(json.dumps(whole["edges"]))
    some = trace_data(r, 10_000, max_bytes=edges * 2 + 2000)  # room for the edges and ~2 KB of nodes
    assert some["edges"] == whole["edges"] and 0 < len(some["nodes"]) < len(whole["nodes"])
    assert sum(len(json.dumps(n)) for n in some["nodes"]) <= edges + 2000 and some["truncated"]
    assert some["nodes"] == whole["nodes"][:len(some["nodes"])]
    none = trace_data(r, 10_000, max_bytes=edges)  # the edges alone take more than half: neither kept
    assert none["edges"] == [] and none["nodes"] == [] and none["truncated"] and none["explored"] == whole["explored"]


def test_each_models_label_says_what_its_cost_counts() -> None:
    # the label is checked against the value on partitions with a known answer (Fig. 3b:
    # instructions from 0; A, B, D, E and T are the arrays it creates)
    from fusionlab.costs import get_cost_model

    singletons = [[i] for i in range(17)]
    t_contracted = [[8, 9, 10, 14]] + [[i] for i in range(17) if i not in (8, 9, 10, 14)]   # T made and freed in one block
    contract = get_cost_model("max_contract")
    assert unit_label(contract).startswith("arrays not contracted")
    assert contract.cost(fig3(), singletons) == 5      # none of the five arrays contracted
    assert contract.cost(fig3(), t_contracted) == 4    # T contracted: one fewer not contracted
    locality = get_cost_model("max_locality")
    assert unit_label(locality).startswith("accesses repeated in another block")
    assert locality.cost(fig3(), [range(17)]) == 0 < locality.cost(fig3(), singletons)   # one block: none repeated elsewhere
    assert all(unit_label(m).endswith("(lower is better)") for m in ("max_contract", "max_locality", "robinson"))
    assert unit_label("bohrium") == "bytes" and unit_label(get_cost_model("bohrium", unit="elements")) == "elements"
    assert get_cost_model("bohrium").cost(fig3(), singletons) == 752 and unit_label("time") == "seconds"
