"""Explorer reports for the browser tests, built without a kernel.

``data/`` holds two version 1 reports as an older fusionlab saved them (Fig. 3 of the WSP
paper, and the heat cell of issue 12: a 500 x 500 grid, 20 iterations of a 5-point stencil,
303 instructions in one batch). Version 2 reports (docs/explorer-protocol.md) are made from
them as the contract says: no DOT, weight edges as data, a status, a palette, an id.
"""

from __future__ import annotations

import copy
import gzip
import json
import re
from pathlib import Path
from typing import Any

import nbformat

# the contract's MIME type (docs/explorer-protocol.md); not imported, so these reports need no kernel code
MIME_TYPE = "application/vnd.fusionlab.explorer+json"

DATA = Path(__file__).parent / "data"
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
PALETTE = {
    "blocks": ["#dbeafe", "#dcfce7", "#fef9c3", "#fde2e2", "#ede9fe", "#cffafe", "#ffedd5", "#e5e7eb"],
    "edges": {"dependency": "#64748b", "forbidden": "#dc2626", "weight": "#16a34a", "contracted": "#1976d2"},
}


def load_v1(name: str) -> dict[str, Any]:
    """A saved version 1 report: ``fig3`` or ``heat``."""
    with gzip.open(DATA / f"{name}-report-v1.json.gz", "rt") as f:
        return json.load(f)


def weights_from_dot(dot: str) -> list[dict[str, Any]]:
    """The weight edges a version 1 DOT drew (dotted, between clusters), as version 2 data."""
    out = []
    for line in dot.splitlines():
        if "style=dotted" not in line:
            continue
        a = re.search(r'ltail="?cluster_(\d+)', line)
        b = re.search(r'lhead="?cluster_(\d+)', line)
        s = re.search(r'label="?([-0-9.e+]+)', line)
        if a and b and s:
            out.append({"a": int(a.group(1)) + 1, "b": int(b.group(1)) + 1, "saving": float(s.group(1))})
    return out


def as_v2(v1: dict[str, Any], report_id: str = "fl-test-report") -> dict[str, Any]:
    """``v1`` as a version 2 report (complete, every partition done)."""
    r = copy.deepcopy(v1)
    dots = r.pop("dots", [])
    r["version"] = 2
    r["id"] = report_id
    r["status"] = {"complete": True, "phase": "done", "pending": [], "interrupted": False,
                   "budget_seconds": None, "elapsed_seconds": 1.5}
    r["palette"] = copy.deepcopy(PALETTE)
    for p in r["partitions"]:
        k = p.pop("dot", None)
        p["weights"] = weights_from_dot(dots[k]) if isinstance(k, int) else []
        p["weights_total"] = len(p["weights"])
        p["status"] = "done"
        p["bound"] = None
    g = r["graph"]
    g["edges_total"] = len(g["dependencies"]) + len(g["forbidden"])
    if r.get("trace"):
        r["trace"]["truncated"] = bool(r["trace"].get("truncated"))
    return r


def find(report: dict[str, Any], algorithm: str, cost_model: str) -> dict[str, Any]:
    return next(p for p in report["partitions"] if p["algorithm"] == algorithm and p["cost_model"] == cost_model)


def report_notebook(path: Path, report: dict[str, Any], html: str | None = None) -> Path:
    """A saved notebook whose one output is the explorer bundle (as if a kernel had run it)."""
    data: dict[str, Any] = {MIME_TYPE: report, "text/plain": "<fusionlab explorer>"}
    if html is not None:
        data["text/html"] = html
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": KERNELSPEC})
    cell = nbformat.v4.new_code_cell("%%fuse\n...", execution_count=1)
    cell.outputs = [nbformat.v4.new_output("display_data", data=data, metadata={})]
    nb.cells = [nbformat.v4.new_markdown_cell("A saved explorer"), cell]
    nbformat.write(nb, path)
    return path


def deep_trace(depth: int = 300) -> dict[str, Any]:
    """A branch-and-bound trace as a deep search leaves it: one long dive (each node keeps
    an edge or cuts it), a pruned sibling every few levels, a new best at the bottom; every
    node cuts many edges (as nodes of a 300-instruction search do)."""
    nodes = []
    edges = [{"a": [k + 1], "b": [k + 2], "saving": float(depth - k)} for k in range(3 * depth + 3)]
    parent = None
    nid = 0
    for d in range(depth):
        nodes.append({"id": nid, "parent": parent, "depth": d, "cut": list(range(0, 3 * d + 3)),
                      "kept": list(range(d % 4)), "cost": 1000.0 - d, "legal": True,
                      "outcome": "new_best" if d == depth - 1 else "branched", "violation": ""})
        me = nid
        nid += 1
        if d % 7 == 3:
            nodes.append({"id": nid, "parent": me, "depth": d + 1, "cut": [d], "kept": [], "cost": 2000.0,
                          "legal": False, "outcome": "pruned", "violation": "cycle"})
            nid += 1
        parent = me
    return {"start_blocks": [[k] for k in range(1, 20)], "edges": edges, "nodes": nodes,
            "seed_costs": {"greedy": 1000.0}, "explored": len(nodes) * 10, "recorded": len(nodes),
            "stopped": "budget", "cost_model": "bohrium", "truncated": True}
