"""The branch-and-bound search tree (the paper's Fig. 10), drawn from the trace data alone.

Each node is a circle coloured by what the search did there: branched (illegal, split
further), pruned (greyed: its bound was no better than the best so far), new best
(green, starred), infeasible (red), unexplored (hollow: the budget ran out). ``step``
replays the search: only nodes visited up to that step are drawn. A large tree is
summarised: nodes deeper than ``max_depth`` or beyond ``max_nodes`` are counted, not drawn.

>>> from fusionlab.ir.examples import fig3
>>> from fusionlab.partition import partition
>>> trace = partition(fig3(), "optimal", seed_greedy=False).trace.to_dict()
>>> svg = tree_svg(trace)
>>> svg.startswith("<svg"), "new best" in tree_summary(trace)
(True, True)
"""

from __future__ import annotations

from collections import Counter
from html import escape
from typing import Any, Mapping

from fusionlab.explore.report import format_cost

__all__ = ["tree_svg", "tree_summary", "OUTCOME_STYLE"]

OUTCOME_STYLE = {
    "branched": ("#60a5fa", "branched (illegal: split further)"),
    "pruned": ("#d1d5db", "pruned (bound no better than the best)"),
    "new_best": ("#22c55e", "new best"),
    "infeasible": ("#f87171", "infeasible"),
    "unexplored": ("#ffffff", "unexplored (budget)"),
}


def tree_summary(trace: Mapping[str, Any], step: int | None = None) -> str:
    """Counts per outcome (up to ``step``), the best cost found, budget notes."""
    nodes = trace["nodes"] if step is None else [n for n in trace["nodes"] if n["id"] <= step]
    counts = Counter(n["outcome"] for n in nodes)
    best = [n["cost"] for n in nodes if n["outcome"] == "new_best"]
    parts = [f"{len(nodes)} of {trace['explored']} nodes"]
    parts += [f"{counts[k]} {OUTCOME_STYLE[k][1].split(' (')[0]}" for k in OUTCOME_STYLE if counts[k]]
    if best:
        parts.append(f"best cost so far {format_cost(min(best))}")
    seeds = ", ".join(f"{k} {format_cost(v)}" for k, v in trace.get("seed_costs", {}).items())
    if seeds:
        parts.append(f"seeds: {seeds}")
    if trace.get("truncated"):
        parts.append(f"only the first {trace['recorded']} nodes were recorded")
    if trace.get("stopped"):
        parts.append(f"stopped: {trace['stopped']} (not proven optimal)")
    return "; ".join(parts)


def tree_svg(trace: Mapping[str, Any], step: int | None = None, *, max_depth: int = 10,
             max_nodes: int = 400, width: int = 760) -> str:
    """SVG text of the search tree up to ``step`` (a node id; all when ``None``)."""
    nodes = [n for n in trace["nodes"] if step is None or n["id"] <= step]
    shown = [n for n in nodes if n["depth"] <= max_depth][:max_nodes]
    ids = {n["id"] for n in shown}
    children: dict[int | None, list[dict[str, Any]]] = {}
    for n in shown:
        parent = n["parent"] if n["parent"] in ids else None
        children.setdefault(parent, []).append(n)
    # tidy layout: leaves take consecutive columns; a parent sits above its children's middle
    x: dict[int, float] = {}
    column = [0]

    def place(n: dict[str, Any]) -> float:
        kids = children.get(n["id"], [])
        if not kids:
            x[n["id"]] = column[0]
            column[0] += 1
        else:
            xs = [place(k) for k in kids]
            x[n["id"]] = (xs[0] + xs[-1]) / 2
        return x[n["id"]]

    stack_roots = children.get(None, [])
    for r in stack_roots:
        place(r)
    depth = max((n["depth"] for n in shown), default=0)
    columns = max(column[0], 1)
    dx = max(min((width - 40) / columns, 60), 8)
    dy = 48
    radius = max(min(dx / 3, 11), 3)
    w = int(max(width, dx * columns + 40))
    h = int((depth + 1) * dy + 40)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="fl-tree" width="{w}" height="{h}" '
           f'viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="10">']
    pos = {n["id"]: (20 + x[n["id"]] * dx + dx / 2, 20 + n["depth"] * dy) for n in shown}
    for n in shown:
        if n["parent"] in pos:
            (x1, y1), (x2, y2) = pos[n["parent"]], pos[n["id"]]
            out.append(f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="#9ca3af"/>')
    last = max(ids, default=None)
    for n in shown:
        cx, cy = pos[n["id"]]
        fill, label = OUTCOME_STYLE.get(n["outcome"], ("#fff", n["outcome"]))
        stroke = "#111827" if n["id"] == last and step is not None else "#374151"
        dash = ' stroke-dasharray="2,2"' if n["outcome"] == "unexplored" else ""
        opacity = ' opacity="0.55"' if n["outcome"] == "pruned" else ""
        title = f"node {n['id']}: cost {format_cost(n['cost'])}; {label}"
        if n["cut"]:
            # a summary: hundreds of cut edges are a wall of numbers
            first = ", ".join(str(c + 1) for c in n["cut"][:5])
            more = f", … ({len(n['cut'])} in all)" if len(n["cut"]) > 5 else ""
            title += f"; cuts weight edges {first}{more}"
        if n["violation"]:
            title += f"; {n['violation']}"
        out.append(f'<g class="fl-node" data-node="{n["id"]}" data-outcome="{escape(n["outcome"])}"{opacity}>'
                   f'<title>{escape(title)}</title>'
                   f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="{radius:.1f}" fill="{fill}" stroke="{stroke}"{dash}/>')
        if n["outcome"] == "new_best":
            out.append(f'<text x="{cx + radius + 1:.1f}" y="{cy - radius:.1f}" fill="#15803d">★</text>')
        if dx >= 28:
            out.append(f'<text x="{cx:.1f}" y="{cy + radius + 11:.1f}" text-anchor="middle">{format_cost(n["cost"])}</text>')
        out.append("</g>")
    hidden = len(nodes) - len(shown)
    if hidden:
        out.append(f'<text x="10" y="{h - 8}" fill="#6b7280">{hidden} deeper or later nodes not drawn '
                   f'(depth limit {max_depth}, {max_nodes} nodes)</text>')
    out.append("</svg>")
    return "".join(out)
