"""The replay of greedy's merges and the fusion waterfall in JupyterLab, from a saved notebook
with no kernel: the arrow keys step the replay forward and back on the graph, and a
waterfall's steps add up to the difference of the two partitions' costs."""

from __future__ import annotations

from fusionlab.explore.jupyter import FuseResult
from fusionlab.explore.waterfall import greedy_replay
from fusionlab.ir.examples import fig3

from .reports import report_notebook
from .test_explorer_browser import explorer, open_lab, open_notebook

TIMEOUT = 20_000


def test_the_replay_steps_with_the_keyboard_and_the_waterfall_adds_up(page, lab, lab_root, output_dir) -> None:
    result = FuseResult.from_program(fig3(), algorithms=["singleton", "linear", "unintrusive", "greedy"])
    report = result.report()
    assert report["status"]["complete"] and report["steps"]["replays"]
    report_notebook(lab_root / "steps.ipynb", report, html=result.bundle(draw=False)["text/html"])
    open_lab(page, lab)
    open_notebook(page, "steps.ipynb")
    root = explorer(page)
    root.locator(".fl-graph[data-fl-graph-state='ready']").wait_for(timeout=TIMEOUT)
    cm = report["selected"]["cost_model"]
    want = [s.describe().split(":")[0] for s in greedy_replay(fig3(), cm)]

    # start from the block level (a narrow window's first view): the replay switches to the instructions
    root.locator("select[data-fl-control='level']").select_option("blocks")
    root.locator(".fl-graph[data-fl-level='blocks'][data-fl-graph-state='ready']").wait_for(timeout=TIMEOUT)
    section = root.locator("[data-fl-section='steps']")
    panel = section.locator(".fl-replay")
    panel.focus()
    assert panel.get_attribute("data-fl-step") == "0"
    for k in (1, 2, 3):
        page.keyboard.press("ArrowRight")
        assert panel.get_attribute("data-fl-step") == str(k)
        # the same merge as greedy's own, in words: "merge {6} into {1,5}" ("{1, 5}" on the page)
        said = panel.locator(".fl-replay-step b").inner_text().replace(" ", "")
        assert said == want[k - 1].replace(" ", "").replace("–", "-"), (said, want[k - 1])
    page.keyboard.press("ArrowLeft")
    assert panel.get_attribute("data-fl-step") == "2"
    assert "step 2 of" in panel.locator(".fl-replay-counter").inner_text()
    # drawn on the graph: greedy's partition selected, the moved instruction outlined, fused ones coloured
    assert root.get_attribute("data-fl-algorithm") == "greedy"
    graph = root.locator(".fl-graph")
    # the replay draws on the instructions (a first view at the block level switches to them)
    graph.locator("svg.fl-replaying g.node[data-instruction]").first.wait_for(timeout=TIMEOUT)
    assert graph.get_attribute("data-fl-level") == "instructions"
    moved = graph.locator("g.node.fl-replay-moved[data-instruction]")
    assert moved.count() == 1 and moved.get_attribute("data-instruction") == "6"
    assert graph.locator("g.node.fl-replay-fused").count() == 3   # {1, 5, 6}
    assert graph.locator("g.node.fl-replay-alone").count() == len(report["program"]["instructions"]) - 3
    graph.scroll_into_view_if_needed()
    graph.screenshot(path=str(output_dir / "steps_replay_graph.png"))
    page.keyboard.press("End")
    assert panel.get_attribute("data-fl-step") == str(len(want))
    page.keyboard.press("Home")
    assert panel.get_attribute("data-fl-step") == "0"
    page.screenshot(path=str(output_dir / "steps_replay.png"), full_page=True)

    # the waterfall from linear to greedy: its steps add up to the difference of the two costs
    costs = {p["algorithm"]: p["cost"] for p in report["partitions"] if p["cost_model"] == cm}
    fall = section.locator(".fl-waterfall")
    options = section.locator("select[data-fl-control='from'] option").all_inner_texts()
    linear = next(o for o in options if o.split(" = ")[0] == "linear" or "linear" in o.split(" = "))
    greedy = next(o for o in options if "greedy" in o.split(" = "))
    section.locator("select[data-fl-control='from']").select_option(label=linear)
    section.locator("select[data-fl-control='to']").select_option(label=greedy)
    changes = [float(x) for x in fall.locator(".fl-waterfall-step[data-fl-change]").evaluate_all(
        "els => els.map(e => e.getAttribute('data-fl-change'))")]
    assert changes and abs(sum(changes) - (costs["greedy"] - costs["linear"])) < 1e-6, (changes, costs)
    assert float(fall.get_attribute("data-fl-total-change")) == costs["greedy"] - costs["linear"]
    # the other way round: the same steps reversed, the opposite sum
    section.locator("select[data-fl-control='from']").select_option(label=greedy)
    section.locator("select[data-fl-control='to']").select_option(label=linear)
    back = [float(x) for x in fall.locator(".fl-waterfall-step[data-fl-change]").evaluate_all(
        "els => els.map(e => e.getAttribute('data-fl-change'))")]
    assert back == [-c for c in reversed(changes)]
    kinds = fall.locator(".fl-waterfall-step[data-fl-kind]").evaluate_all(
        "els => els.map(e => e.getAttribute('data-fl-kind'))")
    assert kinds == sorted(kinds, reverse=True)   # splits first, then merges
    section.screenshot(path=str(output_dir / "steps_waterfall.png"))
    assert not page.page_errors


def test_the_graph_area_is_at_least_300_px_tall(page, lab, lab_root) -> None:
    # a four-instruction program draws small: its area is still 300 px
    from fusionlab.ir.text import parse

    small = parse("ARRAY a float64[8]\nARRAY b float64[8]\nCOPY a, 1\nADD b, a, a\nSYNC b\n")
    result = FuseResult.from_program(small, algorithms=["singleton", "greedy"], cost_models=["bohrium"])
    report_notebook(lab_root / "small.ipynb", result.report(), html=result.bundle(draw=False)["text/html"])
    open_lab(page, lab)
    open_notebook(page, "small.ipynb")
    root = explorer(page)
    root.locator(".fl-graph[data-fl-graph-state='ready']").wait_for(timeout=TIMEOUT)
    box = root.locator(".fl-viewport").bounding_box()
    assert box is not None and box["height"] >= 300, box


def test_projector_mode_is_larger_and_puts_the_graph_beside_the_costs(page, lab, lab_root, output_dir) -> None:
    result = FuseResult.from_program(fig3(), algorithms=["singleton", "linear", "greedy"])
    report_notebook(lab_root / "projector.ipynb", result.report(), html=result.bundle(draw=False)["text/html"])
    open_lab(page, lab)
    open_notebook(page, "projector.ipynb")
    root = explorer(page)
    size = lambda: root.evaluate("el => parseFloat(getComputedStyle(el).fontSize)")  # noqa: E731
    before = size()
    button = root.locator("[data-fl-action='projector']")
    button.focus()
    page.keyboard.press("Enter")   # reachable and usable from the keyboard
    root.locator(".fl-projector-row .fl-graph-pane").wait_for(timeout=TIMEOUT)
    assert "fl-projector" in root.get_attribute("class") and button.get_attribute("aria-pressed") == "true"
    assert size() >= before * 1.4
    graph = root.locator(".fl-projector-row .fl-graph-pane").bounding_box()
    costs = root.locator(".fl-projector-row .fl-costs-section").bounding_box()
    assert costs["x"] >= graph["x"] + graph["width"] - 1 and abs(costs["y"] - graph["y"]) < 40, (graph, costs)
    root.locator(".fl-graph[data-fl-graph-state='ready']").wait_for(timeout=TIMEOUT)
    page.screenshot(path=str(output_dir / "projector.png"), full_page=True)
    button.click()
    assert root.locator(".fl-projector-row > *").count() == 0
    assert root.locator(".fl-panes .fl-graph-pane").count() == 1 and size() == before
    assert not page.page_errors


def test_a_measured_waterfall_shows_each_timed_change_in_both_directions(page, lab, lab_root, output_dir) -> None:
    """A waterfall timed in the kernel (FuseResult.time_waterfall), saved: the measured column
    lists the changes between the timed partitions, they add up to the measured total, and the
    other direction shows them undone; the button says it needs the kernel."""
    from fusionlab.capture import capture

    cap = capture("import numpy as np\na = np.arange(50000.0)\nb = a * 2 + 1\nc = np.sqrt(b) - a\n"
                  "d = c * c + b\ne = float(d.sum())\n")
    result = FuseResult(cap.batches, capture=cap, name="chain", algorithms=["singleton", "greedy"],
                        cost_models=["bohrium"])
    result.report()
    got = result.time_waterfall("singleton", "greedy", repeat=3)
    report = result.report()
    assert report["measured_waterfalls"] == [got]
    report_notebook(lab_root / "measured.ipynb", report)
    open_lab(page, lab)
    open_notebook(page, "measured.ipynb")
    root = explorer(page)
    root.locator(".fl-graph[data-fl-graph-state='ready']").wait_for(timeout=TIMEOUT)
    section = root.locator("[data-fl-section='steps']")
    table = section.locator(".fl-waterfall")
    fall = section.locator(".fl-waterfall-panel")
    fall.locator("select[data-fl-control='from']").select_option("=".join(got["a"]))
    fall.locator("select[data-fl-control='to']").select_option("=".join(got["b"]))
    assert "fl-measured" in table.get_attribute("class")
    cells = table.locator(".fl-waterfall-measured[data-fl-seconds]")
    assert cells.count() == len(got["changes"])
    shown = [float(c) for c in cells.evaluate_all("els => els.map(e => e.getAttribute('data-fl-seconds'))")]
    assert shown == [c["seconds"] for c in got["changes"]]
    assert abs(sum(shown) - float(table.get_attribute("data-fl-measured-total"))) < 1e-12
    assert "interleaved rounds" in table.locator(".fl-waterfall-measured-sum").inner_text()
    # the other way round: the same partitions, each change undone
    fall.locator("select[data-fl-control='from']").select_option("=".join(got["b"]))
    fall.locator("select[data-fl-control='to']").select_option("=".join(got["a"]))
    back = [float(c) for c in table.locator(".fl-waterfall-measured[data-fl-seconds]").evaluate_all(
        "els => els.map(e => e.getAttribute('data-fl-seconds'))")]
    assert back == [-c["seconds"] for c in reversed(got["changes"])]
    button = fall.locator("[data-fl-action='time-waterfall']")
    assert button.is_disabled() and "needs the kernel" in button.get_attribute("title")
    section.screenshot(path=str(output_dir / "steps_measured.png"))
    assert not page.page_errors
