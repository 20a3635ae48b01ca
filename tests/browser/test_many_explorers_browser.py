"""A saved notebook with several explorers, opened with no kernel (issue 35).

* Every explorer's graph reaches its ready state. Before, one layout ran at a time and a new
  one stopped the one running, so in a notebook of several explorers only the last drawing
  ever finished and the others said "Laying out the graph..." for good. The seconds each
  took are written to the output folder (``layouts.json``), not asserted.
* Block colours: the heat report's blocks (more than 24) each get their own colour, in the
  listing and in the graph, in the light and the dark theme.
"""

from __future__ import annotations

import copy
import json

import nbformat

from .reports import find, report_notebook
from .test_explorer_browser import TIMEOUT, fig3_v1, fig3_v2, heat_v2, open_lab, open_notebook  # noqa: F401 (fixtures)


def several(path, reports: list[dict]) -> None:
    """One notebook whose cells each show one of ``reports``."""
    report_notebook(path, reports[0])
    nb = nbformat.read(path, as_version=4)
    for k, report in enumerate(reports[1:], start=2):
        cell = copy.deepcopy(nb.cells[1])
        cell.execution_count = k
        cell.id = f"many-{k}"
        cell.outputs[0]["data"]["application/vnd.fusionlab.explorer+json"] = report
        nb.cells.append(cell)
    nbformat.write(nb, path)


def test_every_explorer_of_a_saved_notebook_finishes_its_layout(page, lab, lab_root, output_dir, fig3_v2, heat_v2):
    reports = []
    for k, base in enumerate([heat_v2, fig3_v2, heat_v2, fig3_v2, heat_v2, fig3_v2]):
        r = copy.deepcopy(base)
        r["id"] = f"fl-many-{k}"
        reports.append(r)
    several(lab_root / "many.ipynb", reports)
    open_lab(page, lab)
    page.evaluate("() => { window.__flt0 = performance.now(); }")
    open_notebook(page, "many.ipynb")
    # record when each graph becomes ready (a MutationObserver on the notebook)
    page.evaluate("""() => {
        window.__flready = {};
        const nb = window.__flnb.node;
        const look = () => nb.querySelectorAll('.fl-explorer').forEach((ex, k) => {
            const g = ex.querySelector(".fl-graph[data-fl-graph-state='ready'] svg");
            if (g && !(k in window.__flready)) { window.__flready[k] = (performance.now() - window.__flt0) / 1000; }
        });
        new MutationObserver(look).observe(nb, {subtree: true, childList: true, attributes: true});
        look();
    }""")
    explorers = page.locator("[data-fl-test='current'] .fl-explorer")
    explorers.nth(5).wait_for(timeout=TIMEOUT)
    assert explorers.count() == 6
    for k in range(6):   # each scrolled into view in turn, as a reader does
        ex = explorers.nth(k)
        ex.scroll_into_view_if_needed()
        ex.locator(".fl-graph[data-fl-graph-state='ready'] svg").wait_for(timeout=TIMEOUT)
    states = [explorers.nth(k).locator(".fl-graph").get_attribute("data-fl-graph-state") for k in range(6)]
    assert states == ["ready"] * 6
    seconds = page.evaluate("() => window.__flready")
    assert sorted(int(k) for k in seconds) == list(range(6))
    (output_dir / "layouts.json").write_text(json.dumps({"seconds_to_ready": seconds}, indent=1))
    page.screenshot(path=str(output_dir / "many-explorers.png"))


def _distinct_colours(page, selector: str) -> tuple[int, int]:
    """(distinct computed colours, elements) of the block-painted elements under ``selector``
    for blocks 1-24 (the first element of each block)."""
    return tuple(page.evaluate("""(sel) => {
        const root = document.querySelector("[data-fl-test='current'] .fl-explorer");
        const seen = new Map();
        root.querySelectorAll(sel).forEach(el => {
            const b = Number(el.getAttribute('data-block'));
            if (b >= 1 && b <= 24 && !seen.has(b)) {
                seen.set(b, getComputedStyle(el).getPropertyValue('--fl-block').trim()
                    || getComputedStyle(el).backgroundColor);
            }
        });
        const colours = [...seen.values()].map(c => {
            const probe = document.createElement('div');
            probe.style.color = c;
            document.body.appendChild(probe);
            const rgb = getComputedStyle(probe).color;
            probe.remove();
            return rgb;
        });
        return [new Set(colours).size, seen.size];
    }""", selector))


def test_24_blocks_get_24_colours(page, lab, lab_root, heat_v2):
    report = copy.deepcopy(heat_v2)
    sel = report["selected"]
    blocks = find(report, sel["algorithm"], sel["cost_model"])["blocks"]
    assert len(blocks) >= 24
    report_notebook(lab_root / "colours.ipynb", report)
    open_lab(page, lab)
    open_notebook(page, "colours.ipynb")
    root = page.locator("[data-fl-test='current'] .fl-explorer").first
    root.locator(".fl-graph[data-fl-graph-state='ready'] svg").wait_for(timeout=TIMEOUT)
    for theme in ("light", "dark"):
        if theme == "dark":
            page.evaluate("() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Dark'})")
            page.wait_for_function("() => document.body.getAttribute('data-jp-theme-light') === 'false'", timeout=TIMEOUT)
        assert _distinct_colours(page, "tr.fl-ins[data-block]") == (24, 24), theme
        assert _distinct_colours(page, ".fl-graph svg g.node[data-block]") == (24, 24), theme
    page.evaluate("() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Light'})")
