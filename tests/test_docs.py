"""The documentation's figures are computed, not typed: the committed page must match."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_paper_reproduction_page_is_current():
    spec = importlib.util.spec_from_file_location("paper_reproduction", DOCS / "paper_reproduction.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert (DOCS / "paper-reproduction.md").read_text() == module.render(), (
        "docs/paper-reproduction.md is stale: run .venv/bin/python docs/paper_reproduction.py"
    )


#: The topic pages docs/semantics.md was split into (issue 33), and backend.md, which took its
#: kernel sections; read together they hold every choice the single page held.
TOPIC_PAGES = (
    "ir.md", "capture.md", "graph.md", "filters-gathers-histograms.md", "reductions-and-scans.md",
    "contractions.md", "passes.md", "cost-models.md", "algorithms.md", "backend.md", "check.md",
)


def test_semantics_page_names_the_tested_choices():
    text = "\n".join((DOCS / page).read_text() for page in TOPIC_PAGES)
    for phrase in ("acyclic", "syncs anywhere", "transitive reduction", "pairwise", "conservatively"):
        assert phrase in text


def test_index_lists_every_page_and_every_topic_page_links_back():
    index = (DOCS / "README.md").read_text()
    for page in sorted(DOCS.glob("*.md")):
        if page.name != "README.md":
            assert f"]({page.name})" in index, f"docs/README.md does not list {page.name}"
    for page in TOPIC_PAGES:
        if page == "backend.md":
            continue
        first_paragraph = (DOCS / page).read_text().split("\n\n")[1]
        assert "](README.md)" in first_paragraph, f"docs/{page} does not link back to the index"


_FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.M | re.S)
_CODE = re.compile(r"`+[^`\n]*`+")
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", re.M)


def github_slug(heading: str) -> str:
    """GitHub's anchor of a heading: its text lower-cased, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for heading in _HEADING.findall(_FENCE.sub("", path.read_text())):
        slug = github_slug(heading)
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def test_relative_links_resolve_to_files_and_headings():
    pages = sorted(DOCS.glob("*.md")) + [DOCS.parent / "README.md"]
    broken = []
    checked = 0
    for page in pages:
        text = _CODE.sub("", _FENCE.sub("", page.read_text()))
        for target in _LINK.findall(text):
            if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("/"):
                continue  # a URL or an absolute path: not this repository's relative link
            path, _, anchor = target.partition("#")
            file = (page.parent / path).resolve() if path else page
            checked += 1
            if not file.exists():
                broken.append(f"{page.name}: {target} (no such file)")
            elif anchor and file.suffix == ".md" and anchor not in anchors(file):
                broken.append(f"{page.name}: {target} (no such heading)")
    assert checked > 100, checked  # the index's table alone has one link per former section
    assert not broken, "\n".join(broken)


def test_github_slug():
    assert github_slug("new, del, in, out (Def. 10)") == "new-del-in-out-def-10"
    assert github_slug("The capture budget: a long loop leaves recording (`capture/budget.py`)") == (
        "the-capture-budget-a-long-loop-leaves-recording-capturebudgetpy")
    assert github_slug("Long batches are cut between iterations (`CaptureBudget.batch_instructions`)") == (
        "long-batches-are-cut-between-iterations-capturebudgetbatch_instructions")
    assert github_slug("NumPy's scalar math") == "numpys-scalar-math"


def test_workloads_page_lists_every_workload():
    from fusionlab.workloads import WORKLOADS

    text = (DOCS / "workloads.md").read_text()
    for w in WORKLOADS.values():
        assert f"| {w.title} |" in text, f"docs/workloads.md misses {w.title}: run docs/workloads_table.py"
