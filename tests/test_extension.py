"""The JupyterLab extension without a browser: built, installed in the environment, enabled.

``make setup`` builds ``extension/`` (the package build's hatch hook, or the Makefile when
its sources change) and installs the build under ``share/jupyter/labextensions``; the
browser tests in ``tests/browser`` check what it draws.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

MIME_TYPE = "application/vnd.fusionlab.explorer+json"  # docs/explorer-protocol.md
REPO = Path(__file__).resolve().parents[1]
NAME = "fusionlab-explorer"
SOURCE = REPO / "extension"
BUILD = REPO / "fusionlab" / "labextension"
INSTALLED = Path(sys.prefix) / "share" / "jupyter" / "labextensions" / NAME



@pytest.fixture(autouse=True)
def _built() -> None:
    # the extension is part of the package: an unbuilt one is a set-up error to fix
    if not BUILD.exists():
        pytest.fail(f"the extension is not built ({BUILD} is missing): run `make setup`, "
                    "which builds it with jlpm")


def test_source_declares_a_mime_extension_and_a_plugin_built_into_the_package() -> None:
    pkg = json.loads((SOURCE / "package.json").read_text())
    assert pkg["name"] == NAME
    # the MIME renderer (index) and the regular plugin that finds a notebook's kernel (plugin)
    assert pkg["jupyterlab"]["mimeExtension"] == "lib/index.js"
    assert pkg["jupyterlab"]["extension"] == "lib/plugin.js"
    assert (SOURCE / pkg["jupyterlab"]["outputDir"]).resolve() == BUILD
    assert (SOURCE / "yarn.lock").exists()
    index = (SOURCE / "src" / "index.ts").read_text()
    assert "safe: true" in index
    rank = int(re.search(r"RANK = (\d+)", index).group(1))
    assert rank < 50  # preferred over the kernel's text/html fallback (rank 50) of the same bundle
    assert MIME_TYPE in (SOURCE / "src" / "types.ts").read_text()
    assert "'fusionlab.explorer'" in (SOURCE / "src" / "kernel.ts").read_text()  # the comm target


def test_build_lays_out_in_a_worker_with_graphviz_in_its_own_chunk() -> None:
    meta = json.loads((BUILD / "package.json").read_text())
    build = meta["jupyterlab"]["_build"]
    assert build["mimeExtension"] and build["extension"] and (BUILD / build["load"]).exists()
    chunks = sorted(BUILD.glob("static/*.js"), key=lambda p: p.stat().st_size)
    texts = {c.name: c.read_text(errors="replace") for c in chunks}
    graphviz = chunks[-1]
    assert graphviz.stat().st_size > 500_000  # Graphviz (WASM inlined), loaded by the worker only
    assert "fl-explorer" not in texts[graphviz.name]
    # the worker: its own small chunk, which loads Graphviz's chunk with importScripts
    workers = [n for n, t in texts.items() if "onmessage" in t and "importScripts" in t and n != graphviz.name
               and not n.startswith("remoteEntry")]
    assert len(workers) == 1
    assert graphviz.name.split(".")[0] in texts[workers[0]]
    # the explorer's code creates the worker from that chunk
    page = [n for n, t in texts.items() if "fl-explorer" in t and "new Worker" in t]
    assert page and workers[0].split(".")[0] in texts[page[0]]
    # Graphviz is not shared through the page's module federation (a worker has no share scope)
    assert "@hpcc-js/wasm-graphviz" not in texts[build["load"].split("/")[-1]]


def test_no_html_is_injected_from_data() -> None:
    for path in (SOURCE / "src").glob("*.ts"):
        text = path.read_text()
        for banned in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"):
            assert banned not in text, f"{path.name} uses {banned}"


def test_installed_where_jupyterlab_finds_it_and_current() -> None:
    assert (INSTALLED / "package.json").exists(), f"{INSTALLED} is missing: run make setup"
    assert json.loads((INSTALLED / "install.json").read_text())["packageName"] == "fusionlab"
    built = json.loads((BUILD / "package.json").read_text())["jupyterlab"]["_build"]["load"]
    assert (INSTALLED / built).exists(), "the installed extension is older than the build: run make setup"


def test_labextension_list_shows_it_enabled() -> None:
    out = subprocess.run([sys.executable, "-m", "jupyterlab.labextensions", "list"],
                         capture_output=True, text=True, timeout=120)
    text = re.sub(r"\x1b\[[0-9;]*m", "", out.stdout + out.stderr)
    line = next((ln for ln in text.splitlines() if NAME in ln), "")
    assert "enabled" in line and "OK" in line, text
