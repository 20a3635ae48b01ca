"""The explorer with a live kernel in a real JupyterLab (issue 12).

* The heat cell (a 500 x 500 grid, 20 iterations of a 5-point stencil with slicing): the
  first display appears while the cell is still running, with its progress line, and fills
  in as the searches finish (the same output updated in place). Its graph zooms and a block
  expands. Choosing a partition in the extension selects it in the kernel (``_fuse.selected``
  follows, read by a following cell) through the kernel channel. Saved and reopened with no
  kernel, the notebook shows the explorer and no widget error.
* A long run (the heat cell at 100 iterations with a large ``--budget``) is interrupted with
  Kernel -> Interrupt once its first display is up: the kernel comes back, the display stops
  saying it computes, and the user's variables are what plain NumPy computes.
"""

from __future__ import annotations

import ast

import nbformat
import numpy as np
import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from .reports import KERNELSPEC, MIME_TYPE
from .test_explorer_browser import TIMEOUT, open_lab, open_notebook, scale, server_kernels, wait_graph

HEAT = """\
u = np.zeros((500, 500))
u[0, :] = 1.0
for _ in range({iterations}):
    u[1:-1,1:-1] = u[1:-1,1:-1] + 0.1*(u[:-2,1:-1]+u[2:,1:-1]+u[1:-1,:-2]+u[1:-1,2:]-4*u[1:-1,1:-1])
"""
CELL_TIMEOUT = 300_000  # ms: the heat cell's budget is 15 s; the machine is shared
INTERRUPT_AFTER = 20_000  # ms: a long run is interrupted at its first display or after this
INTERRUPTED_WITHIN = 90_000  # ms: generous (a shared 2-core machine); the kernel aims at about 1 s


def heat_numpy(iterations: int) -> np.ndarray:
    """The heat cell run by plain NumPy."""
    ns: dict = {"np": np}
    exec(HEAT.format(iterations=iterations), ns)
    return ns["u"]


def write_notebook(path, cells: list[str]) -> None:
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": KERNELSPEC})
    nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
    nbformat.write(nb, path)


def watch_first_display(page) -> None:
    """Record, the moment an explorer first appears in the notebook, whether the cell that
    shows it is still running and whether its progress line is showing."""
    page.evaluate("""() => {
        const nb = window.__flnb;
        window.__flfirst = null;
        const check = () => {
            const ex = nb.node.querySelector(".fl-explorer[data-fl-state='ready']");
            if (!ex || window.__flfirst) { return; }
            const cell = nb.content.widgets.find(c => c.node.contains(ex));
            window.__flfirst = {
                progress: !!ex.querySelector(".fl-progress[data-fl-complete='false']"),
                phase: (ex.querySelector('.fl-progress') || {}).textContent || '',
                running: cell.node.querySelector('.jp-InputPrompt').textContent.includes('*'),
                kernel: nb.sessionContext.session.kernel.status,
            };
            obs.disconnect();
        };
        const obs = new MutationObserver(check);
        obs.observe(nb.node, {childList: true, subtree: true, attributes: true});
    }""")


def run_cell(page, index: int) -> None:
    """Start code cell ``index`` (it runs in the kernel; returns at once)."""
    page.evaluate("""async (k) => {
        const nb = window.__flnb;
        window.jupyterapp.shell.activateById(nb.id);
        nb.content.activeCellIndex = k;
        nb.content.deselectAll();
        // not awaited: the command resolves only when the cell has run
        void window.jupyterapp.commands.execute('notebook:run-cell');
        await new Promise(resolve => setTimeout(resolve, 0));
    }""", index)


def wait_idle(page, index: int, timeout: int = CELL_TIMEOUT) -> None:
    """Wait until cell ``index`` has run and the kernel is idle."""
    page.wait_for_function("""(k) => {
        const nb = window.__flnb;
        const kernel = nb.sessionContext.session && nb.sessionContext.session.kernel;
        const cell = nb.content.widgets[k];
        return kernel && kernel.status === 'idle' && cell.model.executionCount !== null
            && !cell.node.querySelector('.jp-InputPrompt').textContent.includes('*');
    }""", arg=index, timeout=timeout, polling=300)


def outputs(page, index: int) -> list[dict]:
    return page.evaluate("""(k) => {
        const c = window.__flnb.content.widgets[k];
        return Array.from({length: c.model.outputs.length}, (_, j) => c.model.outputs.get(j).toJSON());
    }""", index)


def stdout(page, index: int) -> str:
    outs = outputs(page, index)
    errors = [f"{o['ename']}: {o['evalue']}" for o in outs if o["output_type"] == "error"]
    assert not errors, errors
    return "".join(o["text"] for o in outs if o["output_type"] == "stream" and o["name"] == "stdout")


def live_explorer(page, index: int):
    return page.locator("[data-fl-test='current'] .jp-Cell").nth(index).locator(".fl-explorer")


def no_widget_errors(page) -> None:
    text = page.locator("[data-fl-test='current']").inner_text()
    assert "Error displaying widget" not in text and "model not found" not in text


def test_heat_cell_live_select_in_step_and_reload(page, lab, lab_root, output_dir):
    write_notebook(lab_root / "heat-live.ipynb", [
        "%load_ext fusionlab\nimport numpy as np",
        "%%fuse\n" + HEAT.format(iterations=20),
        "print(_fuse.selected)",
    ])
    open_lab(page, lab, kernel=True)
    open_notebook(page, "heat-live.ipynb")
    run_cell(page, 0)
    wait_idle(page, 0)
    watch_first_display(page)
    run_cell(page, 1)
    page.wait_for_function("() => window.__flfirst !== null", timeout=CELL_TIMEOUT, polling=200)
    first = page.evaluate("() => window.__flfirst")
    # the first display came while the cell still ran, saying what it computes
    assert first["running"] and first["kernel"] == "busy", first
    assert first["progress"] and "Computing" in first["phase"], first
    wait_idle(page, 1)
    root = live_explorer(page, 1)
    # one output, updated in place: one explorer, complete now, and no ipywidgets view beside it
    assert root.count() == 1
    page.wait_for_function("el => !el.querySelector(\".fl-progress[data-fl-complete='false']\")",
                           arg=root.element_handle(), timeout=TIMEOUT)
    assert page.locator("[data-fl-test='current'] .jp-Cell").nth(1).locator(".jupyter-widgets").count() == 0
    assert page.locator("[data-fl-test='current'] .jp-Cell").nth(1).locator(".fl-fallback").count() == 0
    report = next(o["data"][MIME_TYPE] for o in outputs(page, 1) if MIME_TYPE in o.get("data", {}))
    assert report["version"] == 2 and report["status"]["complete"]
    assert root.get_attribute("data-fl-id") == report["id"]
    sel = report["selected"]
    part = next(p for p in report["partitions"]
                if p["algorithm"] == sel["algorithm"] and p["cost_model"] == sel["cost_model"])

    # the graph: block level for 303 instructions, zoom, a block expanded on click
    wait_graph(root, level="blocks")
    assert root.locator(".fl-graph svg g.node[data-block]").count() == len(part["blocks"])
    viewport = root.locator(".fl-viewport")
    viewport.scroll_into_view_if_needed()
    before = scale(root)
    box = viewport.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.wheel(0, -500)
    page.wait_for_function("([el, s]) => parseFloat(el.getAttribute('data-fl-scale')) > s * 1.3",
                           arg=[root.locator(".fl-graph").element_handle(), before], timeout=TIMEOUT)
    big = max(range(len(part["blocks"])), key=lambda k: len(part["blocks"][k])) + 1
    root.locator(f".fl-graph g.node[data-block='{big}']").dispatch_event("click")
    root.locator(f".fl-graph g.cluster[data-block='{big}']").wait_for(timeout=TIMEOUT)
    assert root.locator(".fl-graph g.node[data-instruction]").count() == len(part["blocks"][big - 1])

    # the kernel channel is open; choosing another partition here selects it in the kernel
    bar = root.locator(".fl-kernel-bar[data-fl-channel='open']")
    bar.wait_for(timeout=TIMEOUT)
    other = next(p for p in report["partitions"] if p["status"] == "done" and p["blocks"]
                 and p["cost_model"] == sel["cost_model"] and p["algorithm"] != sel["algorithm"]
                 and len(p["blocks"]) != len(part["blocks"]))
    root.locator("select[data-fl-control='algorithm']").select_option(other["algorithm"])
    page.wait_for_function("""([alg]) => {
        const ex = window.__flnb.content.widgets[1].node.querySelector('.fl-explorer');
        const reply = ex && ex.querySelector('.fl-kernel-reply');
        return reply && reply.getAttribute('data-fl-ok') === 'true' && reply.textContent.includes(alg);
    }""", arg=[other["algorithm"]], timeout=CELL_TIMEOUT)
    # the kernel re-rendered the same output with its new selection
    page.wait_for_function("""(alg) => {
        const ex = window.__flnb.content.widgets[1].node.querySelector('.fl-explorer');
        return ex && ex.getAttribute('data-fl-algorithm') === alg && ex.querySelector('.fl-status').textContent
            .includes('selected in the kernel');
    }""", arg=other["algorithm"], timeout=TIMEOUT)
    updated = next(o["data"][MIME_TYPE] for o in outputs(page, 1) if MIME_TYPE in o.get("data", {}))
    assert updated["selected"] == {"algorithm": other["algorithm"], "cost_model": sel["cost_model"]}
    assert live_explorer(page, 1).count() == 1
    run_cell(page, 2)
    wait_idle(page, 2)
    assert ast.literal_eval(stdout(page, 2).strip()) == (other["algorithm"], sel["cost_model"])
    page.screenshot(path=str(output_dir / "heat-live.png"))

    # saved and reopened with no kernel: the explorer, no widget errors, controls need the kernel
    page.evaluate("async () => { await window.__flnb.context.save(); }")
    page.evaluate("async () => { await window.__flnb.sessionContext.shutdown(); window.__flnb.dispose(); }")
    assert server_kernels(lab) == []
    open_lab(page, lab)
    open_notebook(page, "heat-live.ipynb")
    root = live_explorer(page, 1)
    wait_graph(root)
    assert root.get_attribute("data-fl-algorithm") == other["algorithm"]
    assert root.locator(".fl-kernel-bar").get_attribute("data-fl-channel") == "none"
    assert "need the kernel" in root.locator(".fl-kernel-bar").inner_text()
    # with no kernel, the selection is what the cell chose, not one held in a kernel
    status = root.locator(".fl-status").inner_text()
    assert "selected when the cell ran" in status and "selected in the kernel" not in status
    no_widget_errors(page)
    page.screenshot(path=str(output_dir / "heat-reopened.png"))
    assert not page.page_errors


def test_interrupt_a_long_run_leaves_plain_numpy(page, lab, lab_root):
    iterations = 100
    write_notebook(lab_root / "interrupt.ipynb", [
        "%load_ext fusionlab\nimport numpy as np",
        "%%fuse --budget 3000\n" + HEAT.format(iterations=iterations),
        "print(repr(float(u.sum())), repr(float(u[1, 1])), repr(float(u[250, 1:-1].sum())))",
    ])
    open_lab(page, lab, kernel=True)
    open_notebook(page, "interrupt.ipynb")
    run_cell(page, 0)
    wait_idle(page, 0)
    watch_first_display(page)
    run_cell(page, 1)
    # interrupt once the first display is up, or after the cell has run for a while
    # (wherever it is then: capture, a search, code generation)
    page.wait_for_function("""() => {
        const nb = window.__flnb;
        return nb.sessionContext.session.kernel.status === 'busy'
            && nb.content.widgets[1].node.querySelector('.jp-InputPrompt').textContent.includes('*');
    }""", timeout=TIMEOUT, polling=100)
    try:
        page.wait_for_function("() => window.__flfirst !== null", timeout=INTERRUPT_AFTER, polling=200)
    except PlaywrightTimeout:
        pass
    first = page.evaluate("() => window.__flfirst")
    assert page.evaluate("() => window.__flnb.content.widgets[1].node.querySelector('.jp-InputPrompt')"
                         ".textContent.includes('*')"), "the cell finished before it could be interrupted"
    # Kernel -> Interrupt (the toolbar's command)
    page.evaluate("async () => { window.jupyterapp.shell.activateById(window.__flnb.id); "
                  "await window.jupyterapp.commands.execute('notebook:interrupt-kernel'); }")
    wait_idle(page, 1, timeout=INTERRUPTED_WITHIN)
    root = live_explorer(page, 1)
    if first is not None:
        # the display stays, no longer says it computes, and says it was interrupted
        assert root.count() == 1
        root.locator(".fl-progress.fl-interrupted").wait_for(timeout=TIMEOUT)
        assert "Computing" not in root.locator(".fl-progress").inner_text()
    run_cell(page, 2)
    wait_idle(page, 2)
    got = [float(x) for x in stdout(page, 2).split()]
    u = heat_numpy(iterations)
    assert got == pytest.approx([float(u.sum()), float(u[1, 1]), float(u[250, 1:-1].sum())], rel=1e-12, abs=0)
    assert not page.page_errors


SMALL = """%%fuse --name small
a = np.ones(100_000)
b = a + 1
c = b * 2
d = c + a
e = np.sqrt(d)
print(float(e.sum()))
"""


def kernel_reply(page, cell: int, action: str) -> dict:
    """Wait for the reply to ``action`` shown by the explorer of ``cell``; its text and outcome."""
    page.wait_for_function("""([k, action]) => {
        const ex = window.__flnb.content.widgets[k].node.querySelector('.fl-explorer');
        const r = ex && ex.querySelector('.fl-kernel-reply');
        return r && r.hasAttribute('data-fl-ok') && !r.classList.contains('fl-waiting')
            && r.textContent.startsWith(action + ':');
    }""", arg=[cell, action], timeout=CELL_TIMEOUT, polling=200)
    return page.evaluate("""(k) => {
        const r = window.__flnb.content.widgets[k].node.querySelector('.fl-explorer .fl-kernel-reply');
        return {ok: r.getAttribute('data-fl-ok') === 'true', text: r.textContent};
    }""", cell)


def wait_selected(page, cell: int, algorithm: str) -> None:
    page.wait_for_function("""([k, alg]) => {
        const ex = window.__flnb.content.widgets[k].node.querySelector('.fl-explorer');
        return ex && ex.getAttribute('data-fl-algorithm') === alg;
    }""", arg=[cell, algorithm], timeout=TIMEOUT)


def test_kernel_controls_merge_reset_and_time(page, lab, lab_root):
    write_notebook(lab_root / "controls.ipynb", [
        "%load_ext fusionlab\nimport numpy as np", SMALL, "print(_fuse.selected)"])
    open_lab(page, lab, kernel=True)
    open_notebook(page, "controls.ipynb")
    run_cell(page, 0)
    wait_idle(page, 0)
    run_cell(page, 1)
    wait_idle(page, 1)
    root = live_explorer(page, 1)
    root.locator(".fl-kernel-bar[data-fl-channel='open']").wait_for(timeout=TIMEOUT)
    report = next(o["data"][MIME_TYPE] for o in outputs(page, 1) if MIME_TYPE in o.get("data", {}))
    model = report["selected"]["cost_model"]
    n_singleton = len(next(p for p in report["partitions"]
                           if p["algorithm"] == "singleton" and p["cost_model"] == model)["blocks"])

    # from singletons, merge blocks 1 and 2 by hand: the kernel answers and shows the manual partition
    root.locator("select[data-fl-control='algorithm']").select_option("singleton")
    assert kernel_reply(page, 1, "select")["ok"]
    wait_selected(page, 1, "singleton")
    root = live_explorer(page, 1)
    root.locator("input[data-fl-control='merge-a']").fill("1")
    root.locator("input[data-fl-control='merge-b']").fill("2")
    root.locator("[data-fl-action='merge']").click()
    merged = kernel_reply(page, 1, "merge")
    assert merged["ok"], merged
    assert "merge: merge" not in live_explorer(page, 1).locator(".fl-kernel-reply").inner_text()   # said once
    wait_selected(page, 1, "manual")
    root = live_explorer(page, 1)
    assert root.locator(".fl-listing tr.fl-ins[data-instruction='1']").get_attribute("data-block") == \
        root.locator(".fl-listing tr.fl-ins[data-instruction='2']").get_attribute("data-block")
    updated = next(o["data"][MIME_TYPE] for o in outputs(page, 1) if MIME_TYPE in o.get("data", {}))
    manual = next(p for p in updated["partitions"] if p["algorithm"] == "manual")
    assert len(manual["blocks"]) == n_singleton - 1
    run_cell(page, 2)
    wait_idle(page, 2)
    assert ast.literal_eval(stdout(page, 2).strip())[0] == "manual"
    live_explorer(page, 1).locator("[data-fl-action='reset']").click()
    assert kernel_reply(page, 1, "reset")["ok"]

    # another batch (the print splits the cell in two): the kernel explores it and updates the display
    batches = report["batches"]
    assert len(batches) == 2 and report["batch"] == 0
    live_explorer(page, 1).locator("select[data-fl-control='batch']").select_option("1")
    assert kernel_reply(page, 1, "batch")["ok"]
    page.wait_for_function("""() => {
        const ex = window.__flnb.content.widgets[1].node.querySelector('.fl-explorer');
        return ex && ex.querySelector('.fl-head').textContent.includes('batch 2 of 2');
    }""", timeout=TIMEOUT)
    updated = next(o["data"][MIME_TYPE] for o in outputs(page, 1) if MIME_TYPE in o.get("data", {}))
    assert updated["batch"] == 1
    assert live_explorer(page, 1).locator("tr.fl-ins").count() == batches[1]["instructions"]

    # Compile & time: the timings table fills in, with min, median and spread per variant
    root = live_explorer(page, 1)
    root.locator("input[data-fl-control='repeat']").fill("3")
    root.locator("[data-fl-action='time']").click()
    timed = kernel_reply(page, 1, "time")
    assert timed["ok"], timed
    table = live_explorer(page, 1).locator("table.fl-timings")
    table.wait_for(timeout=TIMEOUT)
    updated = next(o["data"][MIME_TYPE] for o in outputs(page, 1) if MIME_TYPE in o.get("data", {}))
    assert table.locator("tbody tr").count() == len(updated["timings"]["records"]) > 0
    for r, row in zip(updated["timings"]["records"], table.locator("tbody tr").all()):
        if r.get("median_seconds") is not None:
            assert row.locator(".fl-median").inner_text().endswith(("s", "ms", "µs"))
    # Profile: the selected partition's blocks beside the time model, and the roofline
    live_explorer(page, 1).locator("[data-fl-action='profile']").click()
    profiled = kernel_reply(page, 1, "profile")
    assert profiled["ok"], profiled
    section = live_explorer(page, 1).locator("[data-fl-section='profile']")
    section.wait_for(timeout=TIMEOUT)
    updated = next(o["data"][MIME_TYPE] for o in outputs(page, 1) if MIME_TYPE in o.get("data", {}))
    assert section.locator("table.fl-profile tbody tr").count() == len(updated["profile"]["kernels"]) > 0
    assert section.locator("svg.fl-roofline").count() == 1
    assert live_explorer(page, 1).locator("table.fl-timings").count() == 1   # the timings stay
    # the waterfall in measured time: the kernel times the partitions along the steps shown
    fall = live_explorer(page, 1).locator("[data-fl-section='steps'] .fl-waterfall-panel")
    ends = fall.locator(".fl-waterfall").evaluate("t => [t.getAttribute('data-fl-from'), t.getAttribute('data-fl-to')]")
    fall.locator("[data-fl-action='time-waterfall']").click()
    reply = kernel_reply(page, 1, "time_waterfall")
    assert reply["ok"], reply
    table = live_explorer(page, 1).locator(".fl-waterfall.fl-measured")
    table.wait_for(timeout=TIMEOUT)
    updated = next(o["data"][MIME_TYPE] for o in outputs(page, 1) if MIME_TYPE in o.get("data", {}))
    [measured] = updated["measured_waterfalls"]
    # the two ends chosen stay chosen; the kernel timed those steps (in the steps section's direction)
    assert table.evaluate("t => [t.getAttribute('data-fl-from'), t.getAttribute('data-fl-to')]") == ends
    assert sorted(ends) == sorted(["=".join(measured["a"]), "=".join(measured["b"])])
    assert table.locator(".fl-waterfall-measured[data-fl-seconds]").count() == len(measured["changes"])
    assert all(p["median_seconds"] for p in measured["points"]) and measured["numpy_median_seconds"]
    assert not page.page_errors


FIG3 = """%%fuse --name fig3 --trace-limit 20
import numpy as np

def synthetic():
    A = np.zeros(4)
    B = np.zeros(4)
    D = np.zeros(5)
    E = np.zeros(5)
    A += D[:-1]
    A[:] = D[:-1]
    B += E[:-1]
    B[:] = E[:-1]
    T = A * B
    np.maximum(T, E[1:], out=D[1:])
    np.minimum(T, D[1:], out=E[1:])
    return D

print(synthetic())
"""


def test_fetch_the_whole_trace(page, lab, lab_root):
    """The report keeps the first nodes of the search; the kernel sends the whole trace on request."""
    write_notebook(lab_root / "trace.ipynb", ["%load_ext fusionlab", FIG3])
    open_lab(page, lab, kernel=True)
    open_notebook(page, "trace.ipynb")
    run_cell(page, 0)
    wait_idle(page, 0)
    run_cell(page, 1)
    wait_idle(page, 1)
    root = live_explorer(page, 1)
    root.locator(".fl-kernel-bar[data-fl-channel='open']").wait_for(timeout=TIMEOUT)
    report = next(o["data"][MIME_TYPE] for o in outputs(page, 1) if MIME_TYPE in o.get("data", {}))
    trace = report["trace"]
    assert trace["truncated"] and len(trace["nodes"]) == 20 < trace["explored"]
    tree = root.locator(".fl-trace")
    assert tree.get_attribute("data-fl-step") == "20"
    root.locator("[data-fl-action='trace']").click()
    reply = kernel_reply(page, 1, "trace")
    assert reply["ok"], reply
    total = int(reply["text"].split()[1])  # "trace: 451 nodes fetched"
    assert total > 20
    page.wait_for_function("([el, n]) => el.querySelector('.fl-trace').getAttribute('data-fl-step') === String(n)",
                           arg=[root.element_handle(), total], timeout=TIMEOUT)
    assert not page.page_errors


BIG_LOOP = """%%fuse --name big --window 2000 --budget 40
x = np.zeros(10)
for i in range(100_000):
    x += 1.0
"""


def test_a_capped_big_loop_returns_with_what_it_could_show(page, lab, lab_root):
    """A student's 100,000-iteration loop (issue 13): the cell returns (capture stopped at its
    budget), the explorer shows the window it explored with the notices saying what was cut,
    its controls answer (another partition, Compile & time), and ``x`` is plain NumPy's."""
    write_notebook(lab_root / "bigloop.ipynb", [
        "%load_ext fusionlab\nimport numpy as np", BIG_LOOP,
        "print(repr(float(x.sum())), type(x).__name__, len(big.program), big.batch_lengths[0])"])
    open_lab(page, lab, kernel=True)
    open_notebook(page, "bigloop.ipynb")
    run_cell(page, 0)
    wait_idle(page, 0)
    run_cell(page, 1)
    wait_idle(page, 1)
    root = live_explorer(page, 1)
    root.locator(".fl-kernel-bar[data-fl-channel='open']").wait_for(timeout=TIMEOUT)
    kinds = root.locator(".fl-notices li").evaluate_all("els => els.map(e => e.className)")
    assert any("fl-notice-budget" in k for k in kinds) and any("fl-notice-window" in k for k in kinds), kinds
    # every notice carries its level, errors first, then warnings, then information
    levels = root.locator(".fl-notices li .fl-level").all_inner_texts()
    assert len(levels) == len(kinds) and {v.lower() for v in levels} <= {"error", "warning", "info"}, levels
    ranks = [["error", "warning", "info"].index(v.lower()) for v in levels]
    assert ranks == sorted(ranks), levels
    assert all(f"fl-level-{v.lower()}" in k for v, k in zip(levels, kinds)), (levels, kinds)
    assert "fl-level-info" in next(k for k in kinds if "fl-notice-window" in k)
    assert root.locator("tr.fl-ins").count() == 2000
    # another partition the budget computed (a loaded machine's budget may have cut some)
    report = next(o["data"][MIME_TYPE] for o in outputs(page, 1) if MIME_TYPE in o.get("data", {}))
    sel = report["selected"]
    other = [p["algorithm"] for p in report["partitions"]
             if p["blocks"] and p["cost_model"] == sel["cost_model"] and p["algorithm"] != sel["algorithm"]]
    assert other, [(p["algorithm"], p["status"]) for p in report["partitions"]]
    root.locator("select[data-fl-control='algorithm']").select_option(other[0])
    reply = kernel_reply(page, 1, "select")
    assert reply["ok"], reply
    wait_selected(page, 1, other[0])
    root = live_explorer(page, 1)
    root.locator("input[data-fl-control='repeat']").fill("1")
    root.locator("[data-fl-action='time']").click()
    timed = kernel_reply(page, 1, "time")
    assert timed["ok"], timed
    run_cell(page, 2)
    wait_idle(page, 2)
    total, kind, shown, whole = stdout(page, 2).split()
    assert (float(total), kind, int(shown)) == (1_000_000.0, "ndarray", 2000) and int(whole) > 2000
    assert not page.page_errors
