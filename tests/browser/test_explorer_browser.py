"""The JupyterLab extension in a real browser against a real server, on saved reports (no kernel).

* Fig. 3 as a version 2 report (data only, no DOT): the graph is drawn from the data with
  one cluster per block, switching algorithm and cost model redraws it, a block shows its
  code, hover links listing and graph, the search tree steps; the kernel controls say they
  need the kernel; the dark theme restyles it. A version 1 report (an older saved
  notebook, with DOT) still renders.
* The heat cell of issue 12 (303 instructions): block level by default, wheel zoom, drag,
  fit, 100 %, full width, a block expanded on click, focus on a block, the listing scrolls
  inside its pane; a deep search tree lays out compactly and a node's detail summarises.
* Progress and budget: an incomplete report shows its phase, pending entries, and a
  budget-cut partition as "not proven (bound ...)"; timings show min, median, spread,
  threads and the busy warning.
* A crafted report full of markup and script renders as text: nothing runs.
"""

from __future__ import annotations

import copy

import pytest

from fusionlab.explore.report import batch_menu

from .reports import as_v2, deep_trace, find, load_v1, report_notebook

TIMEOUT = 60_000  # ms, for anything the browser waits on


@pytest.fixture(scope="module")
def fig3_v1() -> dict:
    return load_v1("fig3")


@pytest.fixture(scope="module")
def fig3_v2(fig3_v1) -> dict:
    return as_v2(fig3_v1, "fl-fig3")


@pytest.fixture(scope="module")
def heat_v2() -> dict:
    return as_v2(load_v1("heat"), "fl-heat")


# ------------------------------------------------------------------------ page helpers

def open_lab(page, lab, kernel: bool = False) -> None:
    """Load JupyterLab; with ``kernel``, opening a notebook starts its kernel."""
    lab.set_kernel_autostart(kernel)
    page.goto(lab.url("lab?reset"), timeout=TIMEOUT)
    page.wait_for_function("() => window.jupyterapp !== undefined", timeout=TIMEOUT)
    page.evaluate("async () => { await window.jupyterapp.started; await window.jupyterapp.restored; }")


def open_notebook(page, path: str) -> None:
    """Open ``path`` (relative to the server root), with its kernel if the page starts kernels."""
    page.evaluate("""async (path) => {
        const app = window.jupyterapp;
        const nb = await app.commands.execute('docmanager:open', {path, factory: 'Notebook'});
        await nb.context.ready;
        await nb.sessionContext.ready;
        document.querySelectorAll('[data-fl-test]').forEach(el => el.removeAttribute('data-fl-test'));
        nb.node.setAttribute('data-fl-test', 'current');
        window.__flnb = nb;
    }""", path)


def explorer(page, index: int = 0):
    """The index-th explorer, once its graph is laid out."""
    root = page.locator("[data-fl-test='current'] .fl-explorer").nth(index)
    root.locator(".fl-graph[data-fl-graph-state='ready'] svg").wait_for(timeout=TIMEOUT)
    return root


def wait_graph(root, **attrs: str) -> None:
    """Wait until the graph is laid out and its attributes (data-fl-<name>) have these values."""
    root.page.wait_for_function(
        """([el, attrs]) => {
            const g = el.querySelector('.fl-graph');
            return g && g.getAttribute('data-fl-graph-state') === 'ready' && g.querySelector('svg')
                && Object.entries(attrs).every(([k, v]) => g.getAttribute('data-fl-' + k) === v);
        }""", arg=[root.element_handle(), attrs], timeout=TIMEOUT)


def wait_partition(root, algorithm: str, cost_model: str, blocks: int) -> None:
    root.page.wait_for_function(
        """([el, alg, cm, n]) => el.getAttribute('data-fl-algorithm') === alg
            && el.getAttribute('data-fl-cost-model') === cm
            && el.querySelector(".fl-graph[data-fl-graph-state='ready']")
            && el.querySelectorAll('.fl-graph svg g.cluster[data-block], .fl-graph svg g.node[data-block]').length === n""",
        arg=[root.element_handle(), algorithm, cost_model, blocks], timeout=TIMEOUT)


def cluster_count(root) -> int:
    return root.locator(".fl-graph svg g.cluster[data-block]").count()


def scale(root) -> float:
    return float(root.locator(".fl-graph").get_attribute("data-fl-scale"))


def check_hover(root, n: int, m: int) -> None:
    root.locator(f"tr.fl-ins[data-instruction='{n}']").hover()
    assert "fl-hover" in root.locator(f".fl-graph g.node[data-instruction='{n}']").get_attribute("class")
    assert "fl-hover" in root.locator(f"tr.fl-ins[data-instruction='{n}']").get_attribute("class")
    root.locator(f".fl-graph g.node[data-instruction='{m}']").hover()
    assert "fl-hover" in root.locator(f"tr.fl-ins[data-instruction='{m}']").get_attribute("class")
    assert "fl-hover" not in root.locator(f"tr.fl-ins[data-instruction='{n}']").get_attribute("class")


def server_kernels(lab) -> list:
    return lab.api("GET", "kernels")


def no_widget_errors(page) -> None:
    text = page.locator("[data-fl-test='current']").inner_text()
    assert "Error displaying widget" not in text and "model not found" not in text


# ------------------------------------------------------------------------ tests

def test_saved_v2_report_is_interactive_without_kernel(page, lab, lab_root, output_dir, fig3_v2):
    report = copy.deepcopy(fig3_v2)
    sel = report["selected"]
    part = find(report, sel["algorithm"], sel["cost_model"])
    # (greedy seeds this search with the optimum: mark a node as a new best to see it starred)
    best = next(n for n in report["trace"]["nodes"] if n["depth"] == 2)
    best["outcome"] = "new_best"
    html = "<p class='fl-fallback-test'>the kernel's static fallback</p>"
    report_notebook(lab_root / "saved-v2.ipynb", report, html)
    open_lab(page, lab)
    open_notebook(page, "saved-v2.ipynb")
    root = explorer(page)
    assert server_kernels(lab) == []
    # the extension is the only view: the text/html fallback of the same output is not shown
    assert page.locator(".fl-fallback-test").count() == 0
    assert root.get_attribute("data-fl-version") == "2"
    # the layout ran in a Web Worker (a chunk of the extension), not on the page's thread
    assert any("fusionlab-explorer" in w.url for w in page.workers)
    # 17 instructions: the instruction level, one cluster per block, every instruction a node
    wait_graph(root, level="instructions")
    assert cluster_count(root) == len(part["blocks"])
    assert root.locator(".fl-graph svg g.node[data-instruction]").count() == len(report["program"]["instructions"])
    assert root.locator("tr.fl-ins").count() == len(report["program"]["instructions"])
    for k, block in enumerate(part["blocks"]):
        for n in block:
            assert root.locator(f"tr.fl-ins[data-instruction='{n}']").get_attribute("data-block") == str(k + 1)
    # edges drawn from the data: dependencies, fuse-preventing (with their reason), weight edges
    assert root.locator(".fl-graph g.edge.fl-dep").count() > 0
    forbidden = root.locator(".fl-graph g.edge.fl-forbidden")
    assert forbidden.count() > 0
    reasons = {f["reason"] for f in report["graph"]["forbidden"]}
    assert any(r in forbidden.first.text_content() for r in reasons)

    # the kernel controls say they need the kernel, and are disabled
    bar = root.locator(".fl-kernel-bar")
    assert bar.get_attribute("data-fl-channel") == "none"
    assert "need the kernel" in bar.inner_text()
    assert bar.locator("[data-fl-action='merge']").is_disabled()
    assert bar.locator("[data-fl-action='time']").is_disabled()

    # switching the cost model, then the algorithm, changes the graph (from the stored partitions)
    before = root.locator(".fl-graph svg").inner_html()
    other = next(m for m in report["cost_models"]
                 if len(find(report, sel["algorithm"], m)["blocks"]) != len(part["blocks"]))
    root.locator("select[data-fl-control='cost_model']").select_option(other)
    p2 = find(report, sel["algorithm"], other)
    wait_partition(root, sel["algorithm"], other, len(p2["blocks"]))
    assert root.locator(".fl-graph svg").inner_html() != before
    assert root.locator(".fl-status .fl-cost").get_attribute("data-fl-cost") == str(p2["cost"])
    root.locator("select[data-fl-control='algorithm']").select_option("singleton")
    singleton = find(report, "singleton", other)
    wait_partition(root, "singleton", other, len(report["program"]["instructions"]))
    # weight edges of this partition, from its data, labelled with their saving
    weights = root.locator(".fl-graph g.edge.fl-weight")
    assert weights.count() == min(30, len(singleton["weights"])) > 0
    heaviest = max(singleton["weights"], key=lambda w: w["saving"])
    assert any(f"{heaviest['saving']:g}" in t for t in weights.all_text_contents())
    # code is stored for the blocks of the selected partition only
    coded = {tuple(c["instructions"]) for c in report["code"]}
    with_code = next(n for n in range(1, 18) if (n,) in coded)
    without = next(n for n in range(1, 18) if (n,) not in coded)
    root.locator(f"tr.fl-ins[data-instruction='{with_code}']").click()
    assert root.locator(f".fl-block-detail[data-block='{with_code}'] pre.fl-code").count() == 1
    root.locator(f"tr.fl-ins[data-instruction='{without}']").click()
    assert "selected in the kernel" in root.locator(f".fl-block-detail[data-block='{without}']").inner_text()
    # a cost table cell selects its partition
    root.locator(f"td.fl-cost-cell[data-algorithm='{sel['algorithm']}'][data-cost-model='{sel['cost_model']}']").click()
    wait_partition(root, sel["algorithm"], sel["cost_model"], len(part["blocks"]))
    check_hover(root, 5, 9)

    # clicking a block in the graph shows its contracted arrays and the generated code (inside
    # its rounded corner, whatever the scale of the first view)
    code = next(c for c in report["code"] if c["source"])
    block = code["block"]
    root.locator(f".fl-graph g.cluster[data-block='{block}'] > polygon, "
                 f".fl-graph g.cluster[data-block='{block}'] > path").first.click(position={"x": 14, "y": 14})
    detail = root.locator(f".fl-block-detail[data-block='{block}']")
    detail.wait_for(timeout=TIMEOUT)
    assert detail.locator("pre.fl-code").inner_text().strip() == code["source"].strip()
    contracted = part["contracted"][block - 1]
    assert sorted(detail.locator(".fl-block-contracted .fl-contracted").all_inner_texts()) == sorted(contracted)

    # the search tree steps through the recorded nodes (runs of single children drawn as one chain)
    trace = report["trace"]
    tree = root.locator(".fl-trace")
    assert tree.get_attribute("data-fl-step") == str(len(trace["nodes"]))
    tree.locator("[data-fl-action='first']").click()
    assert tree.get_attribute("data-fl-step") == "0"
    assert tree.locator(".fl-tree-node").count() == 0
    for _ in range(3):
        tree.locator("[data-fl-action='next']").click()
    assert tree.get_attribute("data-fl-step") == "3"
    drawn = [int(x) for x in tree.locator(".fl-tree-node").evaluate_all("els => els.map(e => e.dataset.nodes)")]
    assert sum(drawn) == 3
    assert tree.locator(".fl-tree-node.fl-current").count() == 1
    tree.locator("[data-fl-action='last']").click()
    members = tree.locator(".fl-tree-node").evaluate_all("els => els.map(e => e.dataset.members.split(' ').map(Number))")
    assert 0 < sum(len(m) for m in members) <= 150 < len(trace["nodes"])  # cut at a depth limit...
    assert "not drawn" in tree.locator(".fl-hidden-count").inner_text()  # ...and counted
    assert tree.locator(".fl-tree-node.fl-o-pruned").count() > 0
    star = tree.locator(f".fl-tree-node[data-members~='{best['id']}']")
    assert star.locator(".fl-star").count() == 1
    star.click()
    assert "new best" in tree.locator(".fl-tree-detail").inner_text()

    root.scroll_into_view_if_needed()
    page.screenshot(path=str(output_dir / "saved-v2-light.png"))
    light = root.evaluate("el => getComputedStyle(el).backgroundColor")
    page.evaluate("async () => { await window.jupyterapp.commands.execute('apputils:change-theme', "
                  "{theme: 'JupyterLab Dark'}); }")
    page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'", timeout=TIMEOUT)
    page.locator("#jupyterlab-splash").wait_for(state="detached", timeout=TIMEOUT)
    page.wait_for_function("([el, c]) => getComputedStyle(el).backgroundColor !== c",
                           arg=[root.element_handle(), light], timeout=TIMEOUT)
    page.screenshot(path=str(output_dir / "saved-v2-dark.png"))
    page.evaluate("async () => { await window.jupyterapp.commands.execute('apputils:change-theme', "
                  "{theme: 'JupyterLab Light'}); }")
    no_widget_errors(page)
    assert not page.page_errors


def test_saved_v1_report_still_renders(page, lab, lab_root, fig3_v1):
    """A notebook saved by an older fusionlab (report version 1, with DOT) renders from its data."""
    report = fig3_v1
    sel = report["selected"]
    part = find(report, sel["algorithm"], sel["cost_model"])
    report_notebook(lab_root / "saved-v1.ipynb", report)
    open_lab(page, lab)
    open_notebook(page, "saved-v1.ipynb")
    root = explorer(page)
    assert root.get_attribute("data-fl-version") == "1"
    assert cluster_count(root) == len(part["blocks"])
    # its weight edges are read back from its DOT
    root.locator("select[data-fl-control='algorithm']").select_option("singleton")
    wait_partition(root, "singleton", sel["cost_model"], len(report["program"]["instructions"]))
    assert root.locator(".fl-graph g.edge.fl-weight").count() > 0
    assert "older fusionlab" in root.locator(".fl-kernel-bar").inner_text()
    assert not page.page_errors


def test_big_graph_block_level_zoom_expand_focus(page, lab, lab_root, output_dir, heat_v2):
    """The heat cell (303 instructions, about 4,100 edges): readable at block level."""
    report = copy.deepcopy(heat_v2)
    report["trace"] = deep_trace(300)
    sel = report["selected"]
    part = find(report, sel["algorithm"], sel["cost_model"])
    n = len(report["program"]["instructions"])
    assert n == 303 and len(report["graph"]["dependencies"]) + len(report["graph"]["forbidden"]) > 4000
    report_notebook(lab_root / "heat.ipynb", report)
    open_lab(page, lab)
    open_notebook(page, "heat.ipynb")
    root = explorer(page)
    wait_graph(root, level="blocks", focus="")
    graph = root.locator(".fl-graph")
    # one node per block, no instruction nodes; merged edges carry their counts
    assert root.locator(".fl-graph svg g.node[data-block]").count() == len(part["blocks"])
    assert root.locator(".fl-graph svg g.node[data-instruction]").count() == 0
    assert any("×" in t for t in root.locator(".fl-graph g.edge.fl-dep").all_text_contents())
    assert int(graph.get_attribute("data-fl-edges")) < 1000

    # the first view keeps labels readable (a long graph starts at its top, not shrunk to dots)
    viewport = root.locator(".fl-viewport")
    viewport.scroll_into_view_if_needed()
    first = scale(root)
    assert first >= 0.5
    # fit shows it all (smaller here), 100 % its natural size
    root.locator("[data-fl-action='fit']").click()
    fitted = scale(root)
    assert fitted < first
    # wheel zoom about the pointer, drag to pan
    box = viewport.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.wheel(0, -600)
    page.wait_for_function("([el, s]) => parseFloat(el.getAttribute('data-fl-scale')) > s * 1.5",
                           arg=[graph.element_handle(), fitted], timeout=TIMEOUT)
    canvas = root.locator(".fl-canvas")
    before = canvas.evaluate("el => el.style.transform")
    page.mouse.move(box["x"] + 200, box["y"] + 200)
    page.mouse.down()
    page.mouse.move(box["x"] + 120, box["y"] + 150, steps=5)
    page.mouse.up()
    assert canvas.evaluate("el => el.style.transform") != before
    root.locator("[data-fl-action='actual']").click()
    assert scale(root) == 1.0
    root.locator("[data-fl-action='fit']").click()
    assert scale(root) == pytest.approx(fitted, rel=0.01)
    # the viewport keeps its height: a big drawing never makes a huge page
    assert viewport.bounding_box()["height"] <= 530

    # a click on a block node expands it to its instructions (a cluster), and selects it
    big = max(range(len(part["blocks"])), key=lambda k: len(part["blocks"][k])) + 1
    root.locator(f".fl-graph g.node[data-block='{big}']").dispatch_event("click")
    wait_graph(root, level="blocks")
    root.locator(f".fl-graph g.cluster[data-block='{big}']").wait_for(timeout=TIMEOUT)
    members = part["blocks"][big - 1]
    assert root.locator(f".fl-graph g.cluster[data-block='{big}'] ~ g.node[data-instruction], "
                        ".fl-graph g.node[data-instruction]").count() == len(members)
    assert root.locator(f".fl-block-detail[data-block='{big}']").count() == 1
    page.screenshot(path=str(output_dir / "heat-expanded.png"))

    # focus: the block and its neighbours only
    root.locator("[data-fl-action='focus']").click()
    wait_graph(root, focus=str(big))
    drawn = {int(x) for x in root.locator(".fl-graph svg g[data-block]").evaluate_all(
        "els => els.map(e => e.getAttribute('data-block'))")}
    assert big in drawn and 1 < len(drawn) < len(part["blocks"])
    root.locator("[data-fl-action='focus']").click()  # show all again
    wait_graph(root, focus="")

    # full width: the graph pane takes the whole row (a first view too wide to read beside the
    # listing chose it already: back to the narrow pane first)
    if "fl-wide" in (root.get_attribute("class") or ""):
        root.locator("[data-fl-action='wide']").click()
        page.wait_for_function("el => !el.classList.contains('fl-wide')", arg=root.element_handle())
    pane_before = root.locator(".fl-graph-pane").bounding_box()["width"]
    root.locator("[data-fl-action='wide']").click()
    page.wait_for_function("el => el.classList.contains('fl-wide')", arg=root.element_handle())
    assert root.locator(".fl-graph-pane").bounding_box()["width"] > pane_before

    # instruction level on request: every instruction a node; implied dependencies and the
    # 1,341 fuse-preventing edges are left out, and the graph says so
    root.locator("select[data-fl-control='level']").select_option("instructions")
    wait_graph(root, level="instructions")
    assert root.locator(".fl-graph svg g.node[data-instruction]").count() == n
    omitted = root.locator(".fl-omitted").inner_text()
    assert "implied dependencies not drawn" in omitted and "fuse-preventing edges not drawn" in omitted
    root.locator("select[data-fl-control='level']").select_option("auto")
    wait_graph(root, level="blocks")

    # the listing scrolls inside its pane
    listing = root.locator(".fl-listing-scroll")
    dims = listing.evaluate("el => [el.scrollHeight, el.clientHeight]")
    assert dims[0] > dims[1] and dims[1] <= 600
    assert root.locator("tr.fl-ins").count() == n

    # a 300-deep search tree: chains of single children drawn as one, rows not depths
    tree = root.locator(".fl-trace")
    tree.locator("input[data-fl-control='depth']").fill("300")
    tree.locator("input[data-fl-control='depth']").dispatch_event("change")
    svg_height = tree.locator("svg.fl-tree-svg").evaluate("el => el.height.baseVal.value")
    assert svg_height < 30 * 100  # far fewer rows than the 300 levels
    chains = tree.locator(".fl-tree-node.fl-chain")
    assert chains.count() > 0
    total = sum(int(x) for x in tree.locator(".fl-tree-node").evaluate_all("els => els.map(e => e.dataset.nodes)"))
    assert total == len(report["trace"]["nodes"])
    # a node's detail summarises: counts, the first few cut edges, "show all"
    tree.locator(".fl-tree-node.fl-o-new_best").click()
    cut = tree.locator(".fl-tree-detail [data-fl-list='cut']")
    deepest = report["trace"]["nodes"][-1] if report["trace"]["nodes"][-1]["outcome"] == "new_best" else \
        next(x for x in report["trace"]["nodes"] if x["outcome"] == "new_best")
    assert cut.get_attribute("data-count") == str(len(deepest["cut"]))
    assert f"cut {len(deepest['cut'])} edges" in cut.inner_text()
    assert cut.inner_text().count("}–{") == 5
    cut.locator("[data-fl-action='show-all-edges']").click()
    assert tree.locator(".fl-tree-detail [data-fl-list='cut']").inner_text().count("}–{") == len(deepest["cut"])
    page.screenshot(path=str(output_dir / "heat-wide.png"))
    assert not page.page_errors


def test_progress_budget_and_timings(page, lab, lab_root, fig3_v2):
    report = copy.deepcopy(fig3_v2)
    report["status"] = {"complete": False, "phase": "optimal under robinson", "pending": [["optimal", "robinson"],
                        ["ilp", "robinson"]], "interrupted": False, "budget_seconds": 30.0, "elapsed_seconds": 2.5}
    pending = find(report, "ilp", "robinson")
    pending.update({"status": "pending", "blocks": [], "cost": None, "weights": [], "contracted": []})
    cut = find(report, "optimal", "bohrium")
    cut.update({"status": "budget", "bound": 123.0, "proven_optimal": False})
    records = [
        {"cost_model": "numpy", "algorithm": "eager", "blocks": 17, "kernels": 0, "cost": None,
         "compile_seconds": None, "median_seconds": 2e-3, "min_seconds": 1.8e-3, "q1_seconds": 1.9e-3,
         "q3_seconds": 2.1e-3, "spread": 0.1, "samples": 7, "threads": 2, "busy": False, "warnings": [],
         "speedup": 1.0, "max_abs_error": 0.0},
        {"cost_model": "bohrium", "algorithm": "greedy", "blocks": 4, "kernels": 4, "cost": 99,
         "compile_seconds": 0.5, "median_seconds": 5e-4, "min_seconds": 4e-4, "q1_seconds": 3e-4,
         "q3_seconds": 8e-4, "spread": 1.0, "samples": 7, "threads": 2, "busy": True,
         "warnings": ["other processes used the cores"], "speedup": 4.0, "max_abs_error": 1e-12,
         "predicted_seconds": 6e-4},
    ]
    report["timings"] = {"repeat": 7, "records": records}
    report_notebook(lab_root / "progress.ipynb", report)
    open_lab(page, lab)
    open_notebook(page, "progress.ipynb")
    root = explorer(page)
    progress = root.locator(".fl-progress[data-fl-complete='false']")
    assert "optimal under robinson" in progress.inner_text()
    assert "2 more to compute" in progress.inner_text()
    cell = root.locator("td.fl-cost-cell[data-algorithm='ilp'][data-cost-model='robinson']")
    assert cell.get_attribute("data-fl-status") == "pending" and cell.inner_text().strip() == "…"
    cell.click()
    assert "being computed" in root.locator(".fl-status").inner_text()
    root.locator("td.fl-cost-cell[data-algorithm='optimal'][data-cost-model='bohrium']").click()
    wait_partition(root, "optimal", "bohrium", len(cut["blocks"]))
    not_proven = root.locator(".fl-status .fl-not-proven")
    assert "not proven (bound 123" in not_proven.inner_text()
    assert root.locator("td.fl-cost-cell[data-algorithm='optimal'][data-cost-model='bohrium']").inner_text().endswith("†")
    # timings: min, median, spread, runs, threads, units, the busy warning
    table = root.locator("table.fl-timings")
    heads = table.locator("thead th").all_inner_texts()
    assert any(h.startswith("min") for h in heads) and any(h.startswith("median") for h in heads)
    assert any(h.startswith("spread") for h in heads) and any(h.startswith("threads") for h in heads)
    rows = table.locator("tbody tr")
    assert rows.count() == 2
    assert rows.nth(0).locator(".fl-median").inner_text() == "2 ms"
    assert rows.nth(1).locator(".fl-min").inner_text() == "400 µs"
    assert rows.nth(1).locator(".fl-spread").inner_text() == "±100%"
    assert rows.nth(1).locator(".fl-threads").inner_text() == "2"
    # the time model's prediction beside the measured median (issue 16); none for NumPy's row
    assert any(h.startswith("predicted") for h in heads)
    assert rows.nth(1).locator(".fl-predicted").inner_text() == "600 µs"
    assert rows.nth(0).locator(".fl-predicted").inner_text() == "—"
    assert rows.nth(1).get_attribute("data-fl-busy") == "true"
    assert "Other processes used the cores" in root.locator(".fl-busy-warning").inner_text()
    assert "other processes used the cores" in root.locator(".fl-timing-warnings").inner_text()
    assert not page.page_errors


PAYLOADS = [
    '<img src=x onerror="window.__pwned=1">',
    '<script>window.__pwned=2</script>',
    '"><svg onload="window.__pwned=3"><x y="',
    "javascript:window.__pwned=4",
    "</text><foreignObject><iframe src=\"javascript:window.__pwned=5\"></iframe></foreignObject>",
    '" URL="javascript:window.__pwned=6" label="',
    "\\\"]; x [URL=\"javascript:window.__pwned=7\"",
]


def crafted_report(base: dict) -> dict:
    """A report whose every string a user (or a crafted notebook) controls holds markup and script."""
    r = copy.deepcopy(base)
    evil = " ".join(PAYLOADS)
    r["name"] = evil
    r["notices"] = [{"kind": PAYLOADS[0], "message": evil, "line": 1}]
    r["status"] = {"complete": False, "phase": evil, "pending": [[PAYLOADS[1], PAYLOADS[2]]], "interrupted": False,
                   "budget_seconds": None, "elapsed_seconds": 1.0}
    r["palette"] = {"blocks": ["url(javascript:window.__pwned=8)", "red;background:url(x)", PAYLOADS[0]],
                    "edges": {"dependency": "expression(alert(1))", "forbidden": PAYLOADS[1]}}
    for ins in r["program"]["instructions"]:
        ins["text"] = f"{ins['opcode']} {PAYLOADS[ins['n'] % len(PAYLOADS)]}, {PAYLOADS[1]}"
        ins["outputs"] = [PAYLOADS[0]]
        ins["inputs"] = [PAYLOADS[1]]
    for d in r["graph"]["dependencies"]:
        d["base"] = PAYLOADS[5]
    for f in r["graph"]["forbidden"]:
        f["reason"] = PAYLOADS[6]
        f["detail"] = evil
    for p in r["partitions"]:
        p["notes"] = [evil]
        p["unit"] = PAYLOADS[1]
        p["contracted"] = [[PAYLOADS[0], PAYLOADS[1]] for _ in p["blocks"]]
    for c in r["code"]:
        c["source"] = evil
        c["reason"] = PAYLOADS[2]
    if r["trace"]:
        for node in r["trace"]["nodes"]:
            node["violation"] = evil
            node["outcome"] = PAYLOADS[node["id"] % len(PAYLOADS)] if node["id"] % 5 == 0 else node["outcome"]
        r["trace"]["cost_model"] = evil
    # a float appended per iteration: 5,001 batches, nearly all alike; the kernel's menu
    # (fusionlab.explore.report.batch_menu) lists each kind once, and its labels hold markup here
    n = len(r["program"]["instructions"])
    r["batches"] = [{"index": k, "instructions": n if k < 5000 else 3, "signature": "a" if k < 5000 else "b",
                     "same_as": 0 if 0 < k < 5000 else None} for k in range(5001)]
    r["batch"] = 0
    r["batch_menu"] = [dict(m, label=f"{m['label']} {PAYLOADS[k]}") for k, m in enumerate(batch_menu(r["batches"], 0))]
    return r


def test_untrusted_markup_never_runs(page, lab, lab_root, output_dir, fig3_v2):
    report = crafted_report(fig3_v2)
    report_notebook(lab_root / "crafted.ipynb", report, '<img src=x onerror="window.__pwned=9">')
    open_lab(page, lab)
    page.evaluate("() => { window.__pwned = undefined; }")
    open_notebook(page, "crafted.ipynb")
    root = explorer(page)
    sel = report["selected"]
    part = find(report, sel["algorithm"], sel["cost_model"])
    # the payloads make the labels long: the first view may be the block level; draw the instructions
    root.locator("select[data-fl-control='level']").select_option("instructions")
    wait_graph(root, level="instructions")
    assert cluster_count(root) == len(part["blocks"])

    # exercise every view that shows data
    root.locator(".fl-graph g.node[data-instruction='5']").hover()
    root.locator("tr.fl-ins[data-instruction='5']").click()
    root.locator(".fl-block-detail[data-block]").wait_for(timeout=TIMEOUT)
    root.locator("select[data-fl-control='cost_model']").select_option(report["cost_models"][-1])
    root.locator("select[data-fl-control='algorithm']").select_option("singleton")
    wait_graph(root)
    root.locator("select[data-fl-control='level']").select_option("blocks")
    wait_graph(root, level="blocks")
    tree = root.locator(".fl-trace")
    tree.locator("[data-fl-action='first']").click()
    tree.locator("[data-fl-action='next']").click()
    tree.locator(".fl-tree-node").first.click()
    page.wait_for_timeout(500)

    assert page.evaluate("() => window.__pwned") is None
    injected = page.evaluate("""(root) => {
        const all = Array.from(root.querySelectorAll('*'));
        return {
            scripts: root.querySelectorAll('script, iframe, foreignObject, img, a, object, embed').length,
            handlers: all.filter(el => Array.from(el.attributes).some(a => /^on/i.test(a.name))).length,
            urls: all.filter(el => Array.from(el.attributes).some(a => /javascript:|url\\(|expression\\(/i.test(a.value))).length,
            svgs: root.querySelectorAll('.fl-graph svg').length,
        };
    }""", root.element_handle())
    assert injected == {"scripts": 0, "handlers": 0, "urls": 0, "svgs": 1}, injected
    # the markup is shown as text
    assert root.locator(".fl-name").inner_text() == report["name"]
    for n in (1, 2, 3, 4, 5):
        assert PAYLOADS[n % len(PAYLOADS)] in root.locator(f"tr.fl-ins[data-instruction='{n}'] .fl-text").inner_text()
    assert PAYLOADS[1] in root.locator(".fl-progress").inner_text()
    # the batch menu lists the kernel's summary (2 entries for 5,001 batches), labels as text
    options = root.locator("select[data-fl-control='batch'] option")
    assert options.count() == len(report["batch_menu"]) == 2
    assert [options.nth(k).inner_text() for k in range(2)] == [m["label"] for m in report["batch_menu"]]
    assert [options.nth(k).get_attribute("value") for k in range(2)] == ["0", "5000"]
    assert "and 4999 more batches like it" in options.nth(0).inner_text()
    page.screenshot(path=str(output_dir / "crafted-report.png"))
    assert page.evaluate("() => window.__pwned") is None
    assert not page.page_errors
