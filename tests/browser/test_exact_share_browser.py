"""The JupyterLab extension shows the exact searches' share (``--exact-time``) from a saved
notebook: the report of a real run whose share cut the exact searches, drawn with no kernel,
says it is complete, marks the cut entries and shows the notice naming them."""

from __future__ import annotations

from fusionlab.ir.examples import fig3
from fusionlab.explore.jupyter import FuseResult
from fusionlab.explore.report import EXACT_ALGORITHMS

from .reports import report_notebook
from .test_explorer_browser import explorer, open_lab, open_notebook


def test_a_report_the_share_cut_renders_its_final_state(page, lab, lab_root) -> None:
    result = FuseResult.from_program(fig3(), exact_seconds=0.0)  # every exact search of the grid cut
    report = result.report()
    assert report["status"]["complete"]
    report_notebook(lab_root / "share.ipynb", report, html=result.bundle(draw=False)["text/html"])
    open_lab(page, lab)
    open_notebook(page, "share.ipynb")
    root = explorer(page)
    assert root.locator(".fl-progress").count() == 0  # complete: no spinner, nothing "being computed"
    notices = root.locator(".fl-notices").inner_text()
    assert "--exact-time" in notices and "optimal under robinson" in notices and "not proven optimal" in notices
    for p in report["partitions"]:
        cell = root.locator(f"td.fl-cost-cell[data-algorithm='{p['algorithm']}'][data-cost-model='{p['cost_model']}']")
        want = "budget" if p["algorithm"] in EXACT_ALGORITHMS else "done"
        assert cell.get_attribute("data-fl-status") == want
    assert not page.page_errors
