"""A saved notebook's batch menu with no kernel (issue 35): the batches viewed before saving
that fuse something are shown from the report's ``saved_batches``; one never viewed says it
needs the kernel, and the view stays on the batch it showed."""

from __future__ import annotations

from fusionlab.explore.jupyter import FuseResult
from fusionlab.capture import capture

from .reports import report_notebook
from .test_explorer_browser import TIMEOUT, open_lab, open_notebook

FOUR = """\
import numpy as np
a = np.ones(1000)
b = a * 2 + 1
c = np.sqrt(b) - a
print(float(c.sum()))
d = c * 3 + b
e = d / 2 - a
f = np.exp(e) * d
print(float(f.sum()))
g = f + 1
h = np.sin(g) * g
print(float(h.sum()))
k = h - 2
"""


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
