"""A saved notebook's batch menu with no kernel (issue 35): the batches viewed before saving
that fuse something are shown from the report's ``saved_batches``; one never viewed says it
needs the kernel, and the view stays on the batch it showed."""

from __future__ import annotations

from fusionlab.explore.jupyter import FuseResult
from fusionlab.capture import capture

from test_saved_batches import THREE

from .reports import report_notebook
from .test_explorer_browser import TIMEOUT, open_lab, open_notebook

# the three batches of tests/test_saved_batches.py, and a fourth
FOUR = THREE + "h = np.sin(g) * g\nprint(float(h.sum()))\nk = h - 2\n"


def test_the_batches_viewed_switch_without_a_kernel(page, lab, lab_root, output_dir) -> None:
    cap = capture(FOUR)
    res = FuseResult(cap.batches, capture=cap, name="four", algorithms=["singleton", "linear", "greedy"],
                     cost_models=["bohrium"])
    assert len(res.batches) == 4
    res.report()
    shown = res.batch
    viewed = [k for k in range(4) if k != shown][:2]   # one batch is never viewed
    for k in viewed:
        res.set_batch(k)
        res.report()
    res.set_batch(shown)
    report = res.report()
    assert sorted(s["batch"] for s in report["saved_batches"]) == sorted(viewed)
    lengths = {k: len(res.batches[k]) for k in range(4)}
    never = next(k for k in range(4) if k != shown and k not in viewed)
    report_notebook(lab_root / "batches.ipynb", report)
    open_lab(page, lab)
    open_notebook(page, "batches.ipynb")
    root = page.locator("[data-fl-test='current'] .fl-explorer")
    root.locator(".fl-graph[data-fl-graph-state='ready'] svg").wait_for(timeout=TIMEOUT)
    assert root.locator("tr.fl-ins").count() == lengths[shown]
    menu = root.locator("select[data-fl-control='batch']")
    assert menu.is_enabled()
    labels = menu.locator("option").all_inner_texts()
    assert sum("needs the kernel" in t for t in labels) == 1 and "needs the kernel" in labels[never]
    for k in viewed + [shown]:
        menu = root.locator("select[data-fl-control='batch']")
        menu.select_option(str(k))
        root.locator(f".fl-graph[data-fl-graph-state='ready'] svg").wait_for(timeout=TIMEOUT)
        page.wait_for_function("([el, n]) => el.querySelectorAll('tr.fl-ins').length === n",
                               arg=[root.element_handle(), lengths[k]], timeout=TIMEOUT)
        assert root.locator("select[data-fl-control='batch']").input_value() == str(k)
        # the cost table is that batch's: as many partitions as the saved section lists
        assert root.locator("td.fl-cost-cell").count() >= 3
    root.locator("select[data-fl-control='batch']").select_option(str(never))
    assert root.locator("select[data-fl-control='batch']").input_value() == str(shown)
    assert "needs the kernel" in root.locator(".fl-kernel-reply").inner_text()
    assert root.locator("tr.fl-ins").count() == lengths[shown]
    root.screenshot(path=str(output_dir / "saved-batches.png"))
    assert not page.page_errors


def test_a_batch_kept_with_its_first_partitions_says_what_is_not_computed(page, lab, lab_root) -> None:
    """The magic keeps the batches never viewed with their first partitions (compute_others):
    shown from the saved notebook, such a batch says its other partitions are not computed
    yet (no spinner: nothing is running), and its greedy partition is drawn."""
    from fusionlab.support.budget import Budget

    cap = capture(FOUR)
    res = FuseResult(cap.batches, capture=cap, name="four", algorithms=["singleton", "linear", "greedy", "optimal"],
                     cost_models=["bohrium"])
    res.report()
    shown = res.batch
    assert res.compute_others(Budget(10.0)) == 3
    report = res.report()
    other = next(k for k in range(4) if k != shown)
    report_notebook(lab_root / "kept.ipynb", report)
    open_lab(page, lab)
    open_notebook(page, "kept.ipynb")
    root = page.locator("[data-fl-test='current'] .fl-explorer")
    root.locator(".fl-graph[data-fl-graph-state='ready'] svg").wait_for(timeout=TIMEOUT)
    assert not any("needs the kernel" in t for t in root.locator("select[data-fl-control='batch'] option").all_inner_texts())
    root.locator("select[data-fl-control='batch']").select_option(str(other))
    page.wait_for_function("([el, n]) => el.querySelectorAll('tr.fl-ins').length === n",
                           arg=[root.element_handle(), len(res.batches[other])], timeout=TIMEOUT)
    progress = root.locator(".fl-progress.fl-not-computed")
    assert "not computed yet" in progress.inner_text() and progress.locator(".fl-spinner").count() == 0
    assert root.get_attribute("data-fl-algorithm") == "greedy"
    root.locator(".fl-graph[data-fl-graph-state='ready'] svg").wait_for(timeout=TIMEOUT)
    assert not page.page_errors
