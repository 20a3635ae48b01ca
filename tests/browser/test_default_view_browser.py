"""The graph's first view is readable at 1024 and 1500 px (issue 35), in a saved notebook of six
cells of different sizes and styles: every graph reaches its ready state, shows at least one
whole node, is at least 300 px tall, and cuts no node at its right edge; a graph too wide to read
whole even at the block level (the heat cell's 95 blocks) is drawn left to right, opens readable
at its start, ending between two columns of nodes, and says that it goes on. The seconds to ready and the screenshots go to the output folder
(looked at, not asserted)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fusionlab.capture import capture
from fusionlab.explore.jupyter import FuseResult
from fusionlab.ir.examples import fig3

from .test_explorer_browser import TIMEOUT, open_lab, open_notebook
from .test_many_explorers_browser import several

CELLS = Path(__file__).resolve().parents[2] / "benchmarks" / "cells"
SOURCES = ["four_op_chain.py", "heat_roll.py", "softmax_draws.py", "particles_where.py", "mandelbrot_masks.py"]


@pytest.fixture(scope="module")
def six_reports() -> list[dict]:
    reports = []
    result = FuseResult.from_program(fig3(), algorithms=["singleton", "linear", "greedy"])
    reports.append(result.report())
    for name in SOURCES:
        cap = capture((CELLS / name).read_text())
        result = FuseResult(cap.batches, capture=cap, name=name[:-3], algorithms=["singleton", "linear", "greedy"],
                            cost_models=["bohrium", "max_locality"])
        reports.append(result.report())
    for k, r in enumerate(reports):
        r["id"] = f"fl-view-{k}"
    return reports


GEOMETRY = """(ex) => {
    const vp = ex.querySelector('.fl-viewport').getBoundingClientRect();
    const nodes = Array.from(ex.querySelectorAll('.fl-graph g.node')).map(n => n.getBoundingClientRect());
    const rows = nodes.filter(r => r.bottom > vp.top && r.top < vp.bottom);   // in the visible band
    const cut = rows.filter(r => r.left < vp.right - 0.5 && r.right > vp.right + 0.5).length;
    const whole = nodes.filter(r => r.left >= vp.left - 0.5 && r.right <= vp.right + 0.5
                                   && r.top >= vp.top - 0.5 && r.bottom <= vp.bottom + 0.5).length;
    const g = ex.querySelector('.fl-graph');
    return {height: vp.height, width: vp.width, nodes: nodes.length, cut, whole,
            level: g.getAttribute('data-fl-level'), scale: g.getAttribute('data-fl-scale'),
            goesOn: g.getAttribute('data-fl-goes-on'),
            hint: ex.querySelector('.fl-clip-hint') && !ex.querySelector('.fl-clip-hint').hidden
                  ? ex.querySelector('.fl-clip-hint').textContent : ''};
}"""


@pytest.mark.parametrize("width", [1024, 1500])
def test_the_first_view_of_six_graphs_is_readable(page, lab, lab_root, output_dir, six_reports, width) -> None:
    several(lab_root / f"view{width}.ipynb", six_reports)
    page.set_viewport_size({"width": width, "height": 1000})
    open_lab(page, lab)
    page.evaluate("() => { window.__flt0 = performance.now(); }")
    open_notebook(page, f"view{width}.ipynb")
    explorers = page.locator("[data-fl-test='current'] .fl-explorer")
    explorers.nth(len(six_reports) - 1).wait_for(timeout=TIMEOUT)
    seen = {}
    for k in range(len(six_reports)):
        ex = explorers.nth(k)
        ex.scroll_into_view_if_needed()
        ex.locator(".fl-graph[data-fl-graph-state='ready'] svg").wait_for(timeout=TIMEOUT)
        ready = page.evaluate("() => (performance.now() - window.__flt0) / 1000")
        ex.locator(".fl-viewport").scroll_into_view_if_needed()
        got = ex.evaluate(GEOMETRY)
        got["seconds_to_ready"] = round(ready, 2)
        seen[six_reports[k].get("name") or "fig3"] = got
        ex.locator(".fl-graph").screenshot(path=str(output_dir / f"view-{width}-{k}.png"))
        assert got["height"] >= 300, got
        assert got["nodes"] and got["whole"] >= 1, got
        # no node cut at the right edge; a graph too wide to read whole even at the block level
        # is drawn left to right, opens readable at its start, and says that it goes on
        assert got["cut"] == 0, got
        assert got["goesOn"] is None or "goes on to the right" in got["hint"], got
        assert float(got["scale"]) >= 0.35 or got["level"] == "instructions" and "Zoomed out" in got["hint"], got
    (output_dir / f"default-view-{width}.json").write_text(json.dumps(seen, indent=1))
    assert not page.page_errors
