"""Six ``%%fuse`` cells of different sizes and styles, run by a real kernel (issue 35): in
JupyterLab with the extension (live, cells run in the page) and in Notebook 7 with the
extension disabled (the kernel's static fallback), at 1024 and 1500 px. Every graph reaches
its ready state, its area is at least 300 px tall, it shows at least one whole node and cuts
none at its right edge (the fallback's graph, an image of the SVG no wider than its box, shows
every node whole; an inline SVG would lose its shapes to the sanitizer of an untrusted notebook). The seconds to ready and screenshots go to the output folder."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import nbformat
import pytest

from .conftest import LabServer
from .reports import KERNELSPEC
from .test_default_view_browser import GEOMETRY
from .test_course_browser import shut_down
from .test_explorer_browser import TIMEOUT, open_lab, open_notebook
from .test_explorer_live import run_cell, stdout, wait_idle, write_notebook

CELLS = Path(__file__).resolve().parents[2] / "benchmarks" / "cells"
NAME = "fusionlab-explorer"

# the paper's running example as a student writes it (views, slices, a product and a min/max)
FIG3 = """\
import numpy as np
A = np.zeros(1000); B = np.zeros(1000); D = np.zeros(1001); E = np.zeros(1001)
A += D[:-1]; A[:] = D[:-1]
B += E[:-1]; B[:] = E[:-1]
T = A * B
D[1:] = np.maximum(D[1:], T)
E[1:] = np.minimum(E[1:], T)
"""


def sources() -> list[tuple[str, str]]:
    files = ["four_op_chain.py", "heat_roll.py", "softmax_draws.py", "particles_where.py", "mandelbrot_masks.py"]
    return [("fig3", FIG3)] + [(f[:-3], (CELLS / f).read_text()) for f in files]


def cells() -> list[str]:
    return ["%load_ext fusionlab\nimport numpy as np"] + [
        f"%%fuse --name {name}\n{code}" for name, code in sources()]


# the fallback's graph: its scrolling box and the image of the laid-out SVG in it (an image:
# the sanitizer of an untrusted notebook strips inline SVG), no wider than the box
FALLBACK_GEOMETRY = """(g) => {
    const vp = g.getBoundingClientRect();
    const img = g.querySelector('img');
    const r = img ? img.getBoundingClientRect() : null;
    return {height: vp.height, width: vp.width, loaded: !!img && img.complete && img.naturalWidth > 0,
            scale: img && img.naturalWidth ? r.width / img.naturalWidth : 0,
            inside: !!r && r.left >= vp.left - 0.5 && r.right <= vp.right + 0.5 && r.top >= vp.top - 0.5,
            svgInline: g.querySelectorAll('svg').length};
}"""


def check(got: dict) -> None:
    assert got["height"] >= 300, got
    assert got["nodes"] and got["whole"] >= 1, got
    assert got["cut"] == 0, got


@pytest.mark.parametrize("width", [1024, 1500])
def test_six_cells_run_live_open_readable(page, lab, lab_root, output_dir, width) -> None:
    name = f"six-live-{width}.ipynb"
    write_notebook(lab_root / name, cells())
    page.set_viewport_size({"width": width, "height": 1000})
    open_lab(page, lab, kernel=True)
    open_notebook(page, name)
    n = len(sources())
    try:
        for k in range(n + 1):
            run_cell(page, k)
            wait_idle(page, k)
            stdout(page, k)   # no error output
        read_the_six(page, output_dir, width)
    finally:
        shut_down(page)   # its own kernel (earlier live tests may leave theirs)
    assert not page.page_errors


def read_the_six(page, output_dir, width: int) -> None:
    seen = {}
    for k, (cell, _) in enumerate(sources(), start=1):
        ex = page.locator("[data-fl-test='current'] .jp-Cell").nth(k).locator(".fl-explorer")
        ex.scroll_into_view_if_needed()
        ex.locator(".fl-graph[data-fl-graph-state='ready'] svg").wait_for(timeout=TIMEOUT)
        ex.locator(".fl-viewport").scroll_into_view_if_needed()
        got = ex.evaluate(GEOMETRY)
        seen[cell] = got
        ex.locator(".fl-graph").screenshot(path=str(output_dir / f"live-{width}-{cell}.png"))
        check(got)
        assert got["goesOn"] is None or "goes on to the right" in got["hint"], got
        # a notice in plain words; a pass's record (its views, temporaries) behind "details", closed
        for li in ex.locator(".fl-notices li").all():
            assert li.get_attribute("class").split()[-1] in {"fl-level-error", "fl-level-warning", "fl-level-info"}
            toggle = li.locator("details.fl-notice-detail")
            if toggle.count():
                assert toggle.get_attribute("open") is None and not toggle.locator("code").is_visible()
                toggle.locator("summary").click()
                assert toggle.locator("code").is_visible() and toggle.locator("code").inner_text().strip()
        if cell == "heat_roll":   # its rerolling and rewriting records
            assert ex.locator(".fl-notices details.fl-notice-detail").count() >= 1
    (output_dir / f"six-live-{width}.json").write_text(json.dumps(seen, indent=1))


@pytest.fixture(scope="module")
def six_ran(tmp_path_factory) -> Path:
    """The six cells run by a real kernel (nbclient) and saved."""
    from nbclient import NotebookClient

    path = tmp_path_factory.mktemp("six-source") / "six.ipynb"
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": KERNELSPEC})
    nb.cells = [nbformat.v4.new_code_cell(c) for c in cells()]
    NotebookClient(nb, timeout=600, kernel_name="python3").execute()
    nbformat.write(nb, path)
    return path


@pytest.mark.parametrize("width", [1024, 1500])
def test_six_cells_in_the_notebook7_fallback_open_readable(six_ran, tmp_path, browser, output_dir, width) -> None:
    root = tmp_path / "root"
    root.mkdir()
    shutil.copyfile(six_ran, root / "six.ipynb")
    server = LabServer(root, tmp_path / "home", app="notebook", disabled=(NAME,))
    context = browser.new_context(viewport={"width": width, "height": 1000})
    try:
        page = context.new_page()
        page.goto(server.url("notebooks/six.ipynb"), timeout=TIMEOUT)
        fallbacks = page.locator(".fl-fallback")
        fallbacks.nth(len(sources()) - 1).wait_for(timeout=TIMEOUT)
        assert fallbacks.count() == len(sources()) and page.locator(".fl-explorer").count() == 0
        seen = {}
        for k, (cell, _) in enumerate(sources()):
            graph = fallbacks.nth(k).locator(".fl-graph")
            graph.scroll_into_view_if_needed()
            page.wait_for_function("(g) => { const i = g.querySelector('img'); return i && i.complete; }",
                                   arg=graph.element_handle(), timeout=TIMEOUT)
            got = graph.evaluate(FALLBACK_GEOMETRY)
            seen[cell] = got
            graph.screenshot(path=str(output_dir / f"fallback-{width}-{cell}.png"))
            # drawn (not a line of labels), whole in width: no node cut at the right edge
            assert got["height"] >= 300 and got["loaded"] and got["inside"] and got["scale"] > 0, got
            # the listing reads from the left, whatever the page's table style
            code = fallbacks.nth(k).locator("td.fl-code").first
            assert code.evaluate("(td) => getComputedStyle(td).textAlign") == "left"
            if cell == "heat_roll":
                assert fallbacks.nth(k).locator("details.fl-notice-detail").count() >= 1
        (output_dir / f"six-fallback-{width}.json").write_text(json.dumps(seen, indent=1))
    finally:
        context.close()
        server.stop()


def test_nbconvert_keeps_the_listing_left_aligned(six_ran, tmp_path, browser) -> None:
    """The notebook exported to HTML (nbconvert's lab template right-aligns table cells)."""
    from nbconvert import HTMLExporter

    html, _ = HTMLExporter(template_name="lab").from_filename(str(six_ran))
    out = tmp_path / "six.html"
    out.write_text(html)
    context = browser.new_context(viewport={"width": 1200, "height": 1000})
    try:
        page = context.new_page()
        page.goto(out.as_uri(), timeout=TIMEOUT)
        listing = page.locator(".fl-listing").first
        listing.wait_for(timeout=TIMEOUT)
        aligned = listing.evaluate("""(l) => {
            const t = l.querySelector('table'), box = t.parentElement.getBoundingClientRect();
            return {cells: Array.from(t.querySelectorAll('td')).slice(0, 9).map(td => getComputedStyle(td).textAlign),
                    offset: t.getBoundingClientRect().left - box.left};
        }""")
        assert set(aligned["cells"]) == {"left"}, aligned
        assert abs(aligned["offset"]) < 1, aligned
    finally:
        context.close()
