"""The JupyterLab extension in a real browser against a real server (issue 6).

* A notebook is run with a live kernel (notebook 01 when it is in the repository, else a
  generated one with the same ``%%fuse`` cell): the explorer renders an SVG graph with one
  cluster per block, hover highlights, the magic's ipywidgets controls update it through
  the display id, and a screenshot is written. The saved notebook is then reopened with no
  kernel at all and still renders.
* A saved notebook carrying a report (no kernel ever) is explored: switching the cost
  model and algorithm changes the graph, clicking a block shows its code, the search tree
  steps, the dark theme restyles it.
* A crafted report full of markup and script in names, literals, DOT labels and links
  renders as text: nothing runs, nothing is injected.
"""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import nbformat
import pytest

from fusionlab.examples import fig3
from fusionlab.report import MIME_TYPE, get_report

REPO = Path(__file__).resolve().parents[2]
NOTEBOOK_01 = "notebooks/01-wsp-paper-example.ipynb"
TIMEOUT = 60_000  # ms, for anything the browser waits on

KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}


# ------------------------------------------------------------------------ notebooks

def copy_into(root: Path, source: Path, name: str | None = None) -> Path:
    dest = root / (name or source.name)
    shutil.copyfile(source, dest)
    return dest


def live_notebook(root: Path) -> Path:
    """Notebook 01, copied into the server's root (the notebook the issue names)."""
    return copy_into(root, REPO / NOTEBOOK_01)


def report_notebook(path: Path, report: dict, svg: str | None = None) -> Path:
    """A saved notebook whose one output is the explorer bundle (as if a kernel had run it)."""
    data = {MIME_TYPE: report, "text/plain": "<fusionlab explorer>"}
    if svg is not None:
        data["image/svg+xml"] = svg
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": KERNELSPEC})
    cell = nbformat.v4.new_code_cell("%%fuse\n...", execution_count=1)
    cell.outputs = [nbformat.v4.new_output("display_data", data=data, metadata={})]
    nb.cells = [nbformat.v4.new_markdown_cell("A saved explorer"), cell]
    nbformat.write(nb, path)
    return path


def reports_in(path: Path) -> list[dict]:
    nb = json.loads(path.read_text())
    return [o["data"][MIME_TYPE] for c in nb["cells"] for o in c.get("outputs", [])
            if MIME_TYPE in o.get("data", {})]


def find(report: dict, algorithm: str, cost_model: str) -> dict:
    return next(p for p in report["partitions"] if p["algorithm"] == algorithm and p["cost_model"] == cost_model)


@pytest.fixture(scope="module")
def fig3_report() -> dict:
    return get_report(fig3())


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


def run_all_and_save(page, timeout_ms: int = 240_000) -> None:
    page.evaluate("""async () => {
        const nb = window.__flnb;
        const app = window.jupyterapp;
        app.shell.activateById(nb.id);
        await app.commands.execute('notebook:run-all-cells');
    }""")
    # every code cell has run when none is queued or running ("[*]") and the kernel is idle
    page.wait_for_function("""() => {
        const nb = window.__flnb;
        const kernel = nb.sessionContext.session && nb.sessionContext.session.kernel;
        const cells = nb.content.widgets.filter(c => c.model.type === 'code');
        return kernel && kernel.status === 'idle' && cells.every(c => c.model.executionCount !== null)
            && !Array.from(nb.node.querySelectorAll('.jp-InputPrompt')).some(p => p.textContent.includes('*'));
    }""", timeout=timeout_ms, polling=500)
    errors = page.evaluate("""() => window.__flnb.content.widgets
        .filter(c => c.model.type === 'code')
        .flatMap(c => Array.from({length: c.model.outputs.length}, (_, k) => c.model.outputs.get(k).toJSON()))
        .filter(o => o.output_type === 'error').map(o => o.ename + ': ' + o.evalue)""")
    assert not errors, errors
    page.evaluate("async () => { await window.__flnb.context.save(); }")


def explorer(page, index: int = 0):
    """The index-th explorer, once its graph is laid out."""
    root = page.locator("[data-fl-test='current'] .fl-explorer").nth(index)
    root.locator(".fl-graph[data-fl-graph-state='ready'] svg").wait_for(timeout=TIMEOUT)
    return root


def cluster_count(root) -> int:
    return root.locator(".fl-graph svg g.cluster").count()


def wait_partition(root, algorithm: str, cost_model: str, blocks: int) -> None:
    root.page.wait_for_function(
        """([el, alg, cm, n]) => el.getAttribute('data-fl-algorithm') === alg
            && el.getAttribute('data-fl-cost-model') === cm
            && el.querySelector(".fl-graph[data-fl-graph-state='ready']")
            && el.querySelectorAll('.fl-graph svg g.cluster').length === n""",
        arg=[root.element_handle(), algorithm, cost_model, blocks], timeout=TIMEOUT)


def check_hover(root, n: int, m: int) -> None:
    root.locator(f"tr.fl-ins[data-instruction='{n}']").hover()
    assert "fl-hover" in root.locator(f".fl-graph g.node[data-instruction='{n}']").get_attribute("class")
    assert "fl-hover" in root.locator(f"tr.fl-ins[data-instruction='{n}']").get_attribute("class")
    root.locator(f".fl-graph g.node[data-instruction='{m}']").hover()
    assert "fl-hover" in root.locator(f"tr.fl-ins[data-instruction='{m}']").get_attribute("class")
    assert "fl-hover" not in root.locator(f"tr.fl-ins[data-instruction='{n}']").get_attribute("class")


def server_kernels(lab) -> list:
    return lab.api("GET", "kernels")


# ------------------------------------------------------------------------ tests

def test_live_notebook_then_saved_without_kernel(page, lab, lab_root, output_dir):
    nb_path = live_notebook(lab_root)
    open_lab(page, lab, kernel=True)
    open_notebook(page, nb_path.name)
    run_all_and_save(page)

    saved = reports_in(nb_path)
    assert saved, "the saved notebook carries no explorer report"
    report = saved[0]
    sel = report["selected"]
    part = find(report, sel["algorithm"], sel["cost_model"])
    root = explorer(page)
    assert root.get_attribute("data-fl-algorithm") == sel["algorithm"]
    assert cluster_count(root) == len(part["blocks"])
    # the output area chose the explorer over the SVG fallback of the same bundle
    output = page.locator(".jp-OutputArea-output", has=page.locator(".fl-explorer")).first
    assert output.locator(".jp-RenderedSVG").count() == 0

    check_hover(root, 5, 9)
    root.scroll_into_view_if_needed()
    page.screenshot(path=str(output_dir / "live-notebook.png"), full_page=False)
    # an explorer whose report carries timings (notebook 01's --time cell) shows them
    for k, r in enumerate(saved):
        if r.get("timings"):
            rows = explorer(page, k).locator("table.fl-timings tbody tr")
            assert rows.count() == len(r["timings"]["records"])

    # the magic's ipywidgets controls recompute in the kernel and update this display
    other = next(m for m in report["cost_models"]
                 if len(find(report, sel["algorithm"], m)["blocks"]) != len(part["blocks"]))
    dropdown = page.locator(".widget-dropdown", has=page.locator("label", has_text="cost model")).first
    dropdown.locator("select").select_option(other)
    wait_partition(explorer(page), sel["algorithm"], other,
                   len(find(report, sel["algorithm"], other)["blocks"]))
    page.evaluate("async () => { await window.__flnb.context.save(); }")
    assert reports_in(nb_path)[0]["selected"]["cost_model"] == other

    # shut the kernel down, reopen the saved notebook (a copy) with no kernel: it still renders
    page.evaluate("async () => { await window.__flnb.sessionContext.shutdown(); window.__flnb.dispose(); }")
    assert server_kernels(lab) == []
    copy_into(lab_root, nb_path, "saved-copy.ipynb")
    open_lab(page, lab)
    open_notebook(page, "saved-copy.ipynb")
    root = explorer(page)
    assert root.get_attribute("data-fl-cost-model") == other
    assert cluster_count(root) == len(find(report, sel["algorithm"], other)["blocks"])
    assert server_kernels(lab) == []
    assert page.evaluate("() => window.__flnb.sessionContext.session") is None
    check_hover(root, 9, 5)
    page.screenshot(path=str(output_dir / "saved-no-kernel.png"))
    assert not page.page_errors


def test_saved_report_is_interactive_without_kernel(page, lab, lab_root, output_dir, fig3_report):
    from fusionlab.viz.svg import render_svg

    report = copy.deepcopy(fig3_report)
    sel = report["selected"]
    part = find(report, sel["algorithm"], sel["cost_model"])
    svg, _ = render_svg(report["dots"][part["dot"]])
    # (greedy seeds this search with the optimum: mark a node as a new best to see it starred)
    best = next(n for n in report["trace"]["nodes"] if n["depth"] == 2)
    best["outcome"] = "new_best"
    report_notebook(lab_root / "saved-report.ipynb", report, svg)
    # Graphviz (the largest chunk of the build) is fetched only once an explorer draws a graph
    graphviz_chunk = max((REPO / "fusionlab" / "labextension" / "static").glob("*.js"),
                         key=lambda p: p.stat().st_size).name
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    open_lab(page, lab)
    assert any("fusionlab-explorer" in u for u in requests)
    assert not any(graphviz_chunk in u for u in requests)
    open_notebook(page, "saved-report.ipynb")
    root = explorer(page)
    assert any(graphviz_chunk in u for u in requests)
    assert server_kernels(lab) == []
    assert cluster_count(root) == len(part["blocks"])
    assert root.locator("tr.fl-ins").count() == len(report["program"]["instructions"])
    assert page.locator(".jp-RenderedSVG").count() == 0

    # every instruction is a node; rows are coloured by block
    assert root.locator(".fl-graph svg g.node[data-instruction]").count() == len(report["program"]["instructions"])
    for k, block in enumerate(part["blocks"]):
        for n in block:
            assert root.locator(f"tr.fl-ins[data-instruction='{n}']").get_attribute("data-block") == str(k + 1)

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
    wait_partition(root, "singleton", other, len(report["program"]["instructions"]))
    # fuse-preventing edges (dashed) and weight edges between blocks (dotted) are told apart
    assert root.locator(".fl-graph g.edge.fl-forbidden").count() > 0
    assert root.locator(".fl-graph g.edge.fl-weight").count() > 0
    # code is stored for the blocks of the selected partition: a block that is one of them
    # shows it, another says where the code comes from
    coded = {tuple(c["instructions"]) for c in report["code"]}
    with_code = next(n for n in range(1, 18) if (n,) in coded)
    without = next(n for n in range(1, 18) if (n,) not in coded)
    root.locator(f"tr.fl-ins[data-instruction='{with_code}']").click()
    assert root.locator(f".fl-block-detail[data-block='{with_code}'] pre.fl-code").count() == 1
    root.locator(f"tr.fl-ins[data-instruction='{without}']").click()
    assert "selected in the kernel" in root.locator(f".fl-block-detail[data-block='{without}']").inner_text()
    assert root.locator(".fl-block-detail pre.fl-code").count() == 0
    # a cost table cell selects its partition
    root.locator(f"td.fl-cost-cell[data-algorithm='{sel['algorithm']}'][data-cost-model='{sel['cost_model']}']").click()
    wait_partition(root, sel["algorithm"], sel["cost_model"], len(part["blocks"]))

    check_hover(root, 5, 9)

    # clicking a block shows its contracted arrays and the generated code
    code = next(c for c in report["code"] if c["source"])
    block = code["block"]
    root.locator(f".fl-graph g.cluster[data-block='{block}']").click(position={"x": 5, "y": 5})
    detail = root.locator(f".fl-block-detail[data-block='{block}']")
    detail.wait_for(timeout=TIMEOUT)
    assert detail.locator("pre.fl-code").inner_text().strip() == code["source"].strip()
    contracted = part["contracted"][block - 1]
    assert sorted(detail.locator(".fl-block-contracted .fl-contracted").all_inner_texts()) == sorted(contracted)
    for name in contracted:
        assert root.locator(f"tr.fl-ins[data-block='{block}'] .fl-contracted[data-array='{name}']").count() > 0

    # the search tree steps through the recorded nodes
    trace = report["trace"]
    tree = root.locator(".fl-trace")
    assert tree.get_attribute("data-fl-step") == str(len(trace["nodes"]))
    tree.locator("[data-fl-action='first']").click()
    assert tree.get_attribute("data-fl-step") == "0"
    assert tree.locator(".fl-tree-node").count() == 0
    for _ in range(3):
        tree.locator("[data-fl-action='next']").click()
    assert tree.get_attribute("data-fl-step") == "3"
    assert tree.locator(".fl-tree-node").count() == 3
    assert tree.locator(".fl-tree-node.fl-current").count() == 1
    tree.locator("[data-fl-action='last']").click()
    drawn = tree.locator(".fl-tree-node").count()
    assert 0 < drawn <= 150 < len(trace["nodes"])  # large trees are cut at a depth limit...
    assert "not drawn" in tree.locator(".fl-hidden-count").inner_text()  # ...and counted
    assert tree.locator(".fl-tree-node.fl-o-pruned").count() > 0
    assert tree.locator(f".fl-tree-node.fl-o-new_best[data-node='{best['id']}'] .fl-star").count() == 1
    tree.locator(f".fl-tree-node[data-node='{best['id']}']").click()
    assert "new best" in tree.locator(".fl-tree-detail").inner_text()

    root.scroll_into_view_if_needed()
    page.screenshot(path=str(output_dir / "saved-report-light.png"))
    light = root.evaluate("el => getComputedStyle(el).backgroundColor")
    page.evaluate("async () => { await window.jupyterapp.commands.execute('apputils:change-theme', "
                  "{theme: 'JupyterLab Dark'}); }")
    page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'", timeout=TIMEOUT)
    page.locator("#jupyterlab-splash").wait_for(state="detached", timeout=TIMEOUT)
    page.wait_for_function("([el, c]) => getComputedStyle(el).backgroundColor !== c",
                           arg=[root.element_handle(), light], timeout=TIMEOUT)
    page.screenshot(path=str(output_dir / "saved-report-dark.png"))
    page.evaluate("async () => { await window.jupyterapp.commands.execute('apputils:change-theme', "
                  "{theme: 'JupyterLab Light'}); }")
    assert not page.page_errors


PAYLOADS = [
    '<img src=x onerror="window.__pwned=1">',
    '<script>window.__pwned=2</script>',
    '"><svg onload="window.__pwned=3"><x y="',
    "javascript:window.__pwned=4",
    "</text><foreignObject><iframe src=\"javascript:window.__pwned=5\"></iframe></foreignObject>",
]


def crafted_report(base: dict) -> dict:
    """A report whose every string a user controls holds markup and script."""
    r = copy.deepcopy(base)
    evil = " ".join(PAYLOADS)
    r["name"] = evil
    r["notices"] = [{"kind": PAYLOADS[0], "message": evil, "line": 1}]
    for ins in r["program"]["instructions"]:
        ins["text"] = f"{ins['opcode']} {PAYLOADS[ins['n'] % len(PAYLOADS)]}, {PAYLOADS[1]}"
        ins["outputs"] = [PAYLOADS[0]]
        ins["inputs"] = [PAYLOADS[1]]
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
    # DOT whose labels, tooltips, links and HTML-like labels carry the payloads (quoted by
    # hand: the graphviz package would take a string in angle brackets for an HTML label)
    def q(s: str) -> str:
        return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'

    sel = find(r, r["selected"]["algorithm"], r["selected"]["cost_model"])
    lines = ["digraph wsp {"]
    for k, block in enumerate(sel["blocks"]):
        lines.append(f"subgraph cluster_{k} {{ label={q(evil)} URL={q(PAYLOADS[3])} tooltip={q(PAYLOADS[1])} "
                     f"id={q(PAYLOADS[2])} style=filled fillcolor={q('url(javascript:window.__pwned=6)')}")
        for n in block:
            lines.append(f"i{n - 1} [label={q(f'{n}: ' + PAYLOADS[n % len(PAYLOADS)])} URL={q(PAYLOADS[3])} "
                         f"href={q(PAYLOADS[3])} target=_blank tooltip={q(PAYLOADS[0])} class={q(PAYLOADS[2])}]")
        lines.append("}")
    lines.append('html [label=<<B>&lt;script&gt;window.__pwned=7&lt;/script&gt;</B>>]')
    lines.append(f"i0 -> html [label={q(PAYLOADS[0])} labelURL={q(PAYLOADS[3])} style=dashed]")
    lines.append("}")
    r["dots"] = ["\n".join(lines)]
    for p in r["partitions"]:
        p["dot"] = 0
    return r


def test_untrusted_markup_never_runs(page, lab, lab_root, output_dir, fig3_report):
    report = crafted_report(fig3_report)
    # the SVG fallback too carries script: the extension is chosen, and it is never shown
    report_notebook(lab_root / "crafted.ipynb", report, '<svg xmlns="http://www.w3.org/2000/svg">'
                    '<script>window.__pwned=8</script></svg>')
    open_lab(page, lab)
    page.evaluate("() => { window.__pwned = undefined; }")
    open_notebook(page, "crafted.ipynb")
    root = explorer(page)
    sel = report["selected"]
    part = find(report, sel["algorithm"], sel["cost_model"])
    assert cluster_count(root) == len(part["blocks"])

    # exercise every view that shows data
    root.locator(".fl-graph g.node[data-instruction='5']").hover()
    root.locator("tr.fl-ins[data-instruction='5']").click()
    root.locator(".fl-block-detail[data-block]").wait_for(timeout=TIMEOUT)
    assert root.locator(".fl-block-detail pre.fl-code").inner_text() == report["code"][0]["source"]
    root.locator("select[data-fl-control='cost_model']").select_option(report["cost_models"][-1])
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
            urls: all.filter(el => Array.from(el.attributes).some(a => /javascript:|url\\(/i.test(a.value))).length,
            svgs: root.querySelectorAll('.fl-graph svg').length,
        };
    }""", root.element_handle())
    assert injected == {"scripts": 0, "handlers": 0, "urls": 0, "svgs": 1}, injected
    # the markup is shown as text
    assert root.locator(".fl-name").inner_text() == report["name"]
    for n in (1, 2, 3, 4, 5):
        assert PAYLOADS[n % len(PAYLOADS)] in root.locator(f"tr.fl-ins[data-instruction='{n}'] .fl-text").inner_text()
    assert PAYLOADS[1] in root.locator(".fl-graph svg").text_content()
    page.screenshot(path=str(output_dir / "crafted-report.png"))
    assert page.evaluate("() => window.__pwned") is None
    assert not page.page_errors


def test_dense_graph_waits_to_be_asked(page, lab, lab_root, fig3_report):
    """Graphviz runs on the page's thread: a very dense graph is laid out only on request."""
    report = copy.deepcopy(fig3_report)
    n = len(report["program"]["instructions"])
    edges = [f"i{a} -> i{b}" for a in range(n) for b in range(a + 1, n)] * 20
    report["dots"].append("digraph wsp {\n" + "\n".join(edges) + "\n}")
    sel = report["selected"]
    find(report, sel["algorithm"], sel["cost_model"])["dot"] = len(report["dots"]) - 1
    report_notebook(lab_root / "dense.ipynb", report)
    open_lab(page, lab)
    open_notebook(page, "dense.ipynb")
    root = page.locator("[data-fl-test='current'] .fl-explorer").first
    root.locator(".fl-graph[data-fl-graph-state='deferred'] [data-fl-action='layout']").wait_for(timeout=TIMEOUT)
    assert str(len(edges)) in root.locator(".fl-graph").inner_text()
    # the other partitions draw as usual
    other = next(p for p in report["partitions"] if p["cost_model"] != sel["cost_model"]
                 and p["algorithm"] == sel["algorithm"])
    root.locator("select[data-fl-control='cost_model']").select_option(other["cost_model"])
    wait_partition(root, sel["algorithm"], other["cost_model"], len(other["blocks"]))
    assert not page.page_errors
