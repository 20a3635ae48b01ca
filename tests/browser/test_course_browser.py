"""A lab as a student sees it in JupyterLab (issue 36): each exercise's solution and check cells
open collapsed (their source, which holds or computes the answer, hidden until clicked), its
answer cell open, and running the lab in its kernel prints "not yet" under an unanswered check."""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
import pytest

from .test_explorer_browser import TIMEOUT, open_lab, open_notebook, server_kernels
from .test_explorer_live import run_cell, wait_idle

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


@pytest.mark.parametrize("name", ["02-legality"])
def test_a_lab_opens_with_its_solutions_collapsed_and_its_checks_asking(page, lab, lab_root, output_dir, name) -> None:
    shutil.copyfile(NOTEBOOKS / f"{name}.ipynb", lab_root / f"{name}.ipynb")
    roles = []
    for c in nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4).cells:
        tags = c.metadata.get("tags", [])
        roles.append(next((r for r in ("answer", "check", "solution") if r in tags), ""))
    open_lab(page, lab, kernel=True)
    open_notebook(page, f"{name}.ipynb")
    try:
        opened_with_its_solutions_collapsed(page, roles, output_dir, name)
    finally:
        shut_down(page)
    assert server_kernels(lab) == []
    assert not page.page_errors


def opened_with_its_solutions_collapsed(page, roles: list[str], output_dir, name: str) -> None:
    hidden = page.evaluate("""() => window.__flnb.content.widgets.map(c => c.inputHidden)""")
    assert len(hidden) == len(roles)
    for k, (role, h) in enumerate(zip(roles, hidden)):
        assert h == (role in ("solution", "check")), (k, role, h)
    # the collapsed input shows as a placeholder a student clicks to open
    cells = page.locator("[data-fl-test='current'] .jp-Cell")
    first = roles.index("solution")
    assert cells.nth(first).locator(".jp-InputPlaceholder").count() == 1
    # run the lab down to the first check: it asks
    check = roles.index("check")
    for k in range(check + 1):
        if page.evaluate("(k) => window.__flnb.content.widgets[k].model.type", k) == "code":
            run_cell(page, k)
            wait_idle(page, k)
    said = cells.nth(check).locator(".jp-OutputArea").inner_text()
    assert "not yet" in said, said
    cells.nth(check).scroll_into_view_if_needed()
    page.screenshot(path=str(output_dir / f"lab-{name}.png"))

def shut_down(page) -> None:
    """End the notebook's kernel (later tests of the session's server check that none runs)."""
    page.evaluate("async () => { await window.__flnb.sessionContext.shutdown(); window.__flnb.dispose(); }")
