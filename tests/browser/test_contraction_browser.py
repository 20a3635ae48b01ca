"""The contraction view of the JupyterLab extension, from a saved notebook with no kernel.

The report of a program with a matrix product carries every arrangement of it (its
``contractions`` section); the extension applies a rule by following an edge of that graph
and undoes by popping its own stack, so the view works with no kernel at all.
"""

from __future__ import annotations

import copy

import pytest

from fusionlab.explore.report import get_report
from fusionlab.ir.text import parse

from .reports import report_notebook
from .test_explorer_browser import TIMEOUT, explorer, open_lab, open_notebook, server_kernels

PROGRAM = ("ARRAY A float64[4,32]\nARRAY B float64[32,5]\nARRAY C float64[4,5]\nRANDOM A, seed=1\n"
           'RANDOM B, seed=2\nCONTRACT C, A, B, subscripts="ij,jk->ik"\nSYNC C\n')


@pytest.fixture(scope="module")
def contraction_report() -> dict:
    r = get_report(parse(PROGRAM), algorithms=["singleton", "greedy"], cost_models=["bohrium"])
    r["id"] = "fl-contraction"
    return r


def _view(root):
    view = root.locator("[data-fl-section='contractions'] .fl-contraction")
    view.wait_for(timeout=TIMEOUT)
    return view


def test_apply_and_undo_from_a_saved_notebook(page, lab, lab_root, contraction_report):
    entry = contraction_report["contractions"][0]
    report_notebook(lab_root / "saved-contraction.ipynb", contraction_report)
    open_lab(page, lab)
    open_notebook(page, "saved-contraction.ipynb")
    root = explorer(page)
    assert server_kernels(lab) == []
    view = _view(root)
    start = entry["terms"][0]
    assert view.locator(".fl-pane-title").first.inner_text() == (
        f'instruction {entry["n"]}: C = einsum("ij,jk->ik", A, B): A 4x32, B 32x5, float64')
    assert view.get_attribute("data-fl-loops") == "i k j"
    assert view.locator("[data-fl-part='term']").inner_text() == start["text"]
    assert view.locator("[data-fl-part='nest']").inner_text() == start["nest"]
    rules = view.locator("button.fl-rule")
    assert rules.count() == len([e for e in entry["edges"] if e["source"] == 0]) == 3
    assert view.locator("button[data-fl-action='undo']").is_disabled()
    # apply the map-rnz exchange (eq. 42) at level 1: i k j -> i j k
    view.locator("button.fl-rule[data-fl-rule='map-rnz exchange'][data-fl-position='1']").click()
    target = next(e["target"] for e in entry["edges"] if e["source"] == 0 and e["rule"] == "map-rnz exchange")
    assert view.get_attribute("data-fl-loops") == "i j k"
    assert view.get_attribute("data-fl-term") == str(target)
    assert view.locator("[data-fl-part='term']").inner_text() == entry["terms"][target]["text"]
    assert view.locator("[data-fl-part='order']").inner_text() == "mapA rnz mapB"
    assert "a_v = A[i, j]" in view.locator("[data-fl-part='nest']").inner_text()
    assert "map-rnz exchange at level 1 (eq. 42)" in view.locator("[data-fl-part='derivation']").inner_text()
    # then subdivide j by 16, and undo both steps
    view.locator("button.fl-rule[data-fl-rule='subdivision']").click()
    assert view.get_attribute("data-fl-loops") == "i j_o j_i k"
    view.locator("button[data-fl-action='undo']").click()
    assert view.get_attribute("data-fl-loops") == "i j k"
    view.locator("button[data-fl-action='undo']").click()
    assert view.get_attribute("data-fl-loops") == "i k j"
    assert view.locator("[data-fl-part='term']").inner_text() == start["text"]
    assert view.locator("button[data-fl-action='undo']").is_disabled()
    assert not page.page_errors


def test_timings_chart_and_markup_render_as_text(page, lab, lab_root, contraction_report):
    report = copy.deepcopy(contraction_report)
    entry = report["contractions"][0]
    entry["operands"] = ["<img src=x onerror=window.__flpwned=1>", "B"]
    entry["terms"][0]["text"] = "<script>window.__flpwned=1</script>"
    entry["timings"] = {"numpy_seconds": 0.001, "repeat": 3, "records": [
        {"term": k, "loops": t["loops"], "order": t["order"], "serial_seconds": 0.002 * (k + 1),
         "parallel_seconds": None, "max_relative_error": 0.0} for k, t in enumerate(entry["terms"])]}
    report["id"] = "fl-contraction-evil"
    report_notebook(lab_root / "saved-contraction-evil.ipynb", report)
    open_lab(page, lab)
    open_notebook(page, "saved-contraction-evil.ipynb")
    view = _view(explorer(page))
    assert view.locator("[data-fl-part='term']").inner_text() == "<script>window.__flpwned=1</script>"
    assert view.locator("img").count() == 0 and view.locator("script").count() == 0
    assert page.evaluate("() => window.__flpwned") is None
    chart = view.locator("svg[data-fl-part='chart']")
    assert chart.locator("rect.fl-bar").count() == len(entry["terms"])
    assert chart.locator("rect.fl-bar-current").count() == 1
    assert "NumPy 1 ms" in chart.text_content()
    assert not page.page_errors
