"""The documentation's figures are computed, not typed: the committed page must match."""

from __future__ import annotations

import importlib.util
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_paper_reproduction_page_is_current():
    spec = importlib.util.spec_from_file_location("paper_reproduction", DOCS / "paper_reproduction.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert (DOCS / "paper-reproduction.md").read_text() == module.render(), (
        "docs/paper-reproduction.md is stale: run .venv/bin/python docs/paper_reproduction.py"
    )


def test_semantics_page_names_the_tested_choices():
    text = (DOCS / "semantics.md").read_text()
    for phrase in ("acyclic", "syncs anywhere", "transitive reduction", "pairwise", "conservatively"):
        assert phrase in text


def test_workloads_page_lists_every_workload():
    from fusionlab.workloads import WORKLOADS

    text = (DOCS / "workloads.md").read_text()
    for w in WORKLOADS.values():
        assert f"| {w.title} |" in text, f"docs/workloads.md misses {w.title}: run docs/workloads_table.py"
