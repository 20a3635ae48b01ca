"""Notebook 7 (``jupyter notebook``) shows one view of a ``%%fuse`` output.

The output is a bundle {explorer report, text/html, text/plain} (docs/explorer-protocol.md).
With the extension disabled (a page config in a temporary JUPYTER_CONFIG_DIR), Notebook 7
shows the kernel's static text/html fallback; with it enabled, the extension's explorer and
not the fallback. The notebook is run once by a real kernel (nbclient), then opened with no
kernel.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import nbformat
import pytest

from .conftest import LabServer
from .reports import KERNELSPEC, MIME_TYPE
from .test_explorer_browser import TIMEOUT

NAME = "fusionlab-explorer"
CELL = """%%fuse --name nb7
a = np.ones(1000)
b = a + 1
c = b * 2 + a
d = np.sqrt(c)
print(float(d.sum()))
"""


@pytest.fixture(scope="module")
def ran_notebook(tmp_path_factory) -> Path:
    """A notebook run by a real kernel: its output is the explorer bundle."""
    from nbclient import NotebookClient

    path = tmp_path_factory.mktemp("nb7-source") / "fused.ipynb"
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": KERNELSPEC})
    nb.cells = [nbformat.v4.new_code_cell("%load_ext fusionlab\nimport numpy as np"), nbformat.v4.new_code_cell(CELL)]
    NotebookClient(nb, timeout=300, kernel_name="python3").execute()
    nbformat.write(nb, path)
    bundles = [o["data"] for o in nb.cells[1].outputs if o.get("output_type") == "display_data"]
    assert len(bundles) == 1 and {MIME_TYPE, "text/html", "text/plain"} <= set(bundles[0])
    return path


@pytest.mark.parametrize("enabled", [False, True], ids=["extension-disabled", "extension-enabled"])
def test_notebook7_renders_one_view(ran_notebook, tmp_path, enabled, output_dir, browser):
    root = tmp_path / "root"
    root.mkdir()
    shutil.copyfile(ran_notebook, root / "fused.ipynb")
    server = LabServer(root, tmp_path / "home", app="notebook", disabled=() if enabled else (NAME,))
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page_config = json.loads(server.page_config.read_text())
        assert (NAME in page_config["disabledExtensions"]) is not enabled
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: NAME in f"{e.stack}" and errors.append(str(e)))
        page.goto(server.url("notebooks/fused.ipynb"), timeout=TIMEOUT)
        output = page.locator(".jp-Cell").nth(1).locator(".jp-OutputArea-output")
        output.first.wait_for(timeout=TIMEOUT)
        if enabled:
            page.locator(".fl-explorer[data-fl-state='ready']").wait_for(timeout=TIMEOUT)
            assert page.locator(".fl-explorer").count() == 1
            assert page.locator(".fl-fallback").count() == 0
            page.locator(".fl-graph[data-fl-graph-state='ready'] svg").wait_for(timeout=TIMEOUT)
            assert page.locator(".fl-name").inner_text() == "nb7"
        else:
            fallback = page.locator(".fl-fallback")
            fallback.wait_for(timeout=TIMEOUT)
            assert fallback.count() == 1
            assert page.locator(".fl-explorer").count() == 0
            assert "nb7" in fallback.inner_text()
            # the rendered fallback, not its source text
            assert "<div" not in output.last.inner_text()
        text = page.locator(".jp-Cell").nth(1).inner_text()
        assert "Error displaying widget" not in text and "model not found" not in text
        page.screenshot(path=str(output_dir / f"notebook7-{'extension' if enabled else 'fallback'}.png"))
        assert not errors
    finally:
        context.close()
        server.stop()
