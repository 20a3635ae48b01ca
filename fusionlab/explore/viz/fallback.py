"""The static fallback view of a report: one ``text/html`` page for front ends without the
JupyterLab extension (Notebook 7, VS Code, nbviewer, an HTML export).

It is built from the report's data only: a header with the selected partition and the
progress line, the capture's notices, the listing coloured by block (scrolling in its pane),
the graph (an SVG laid out by the caller from :func:`fusionlab.explore.dot.get_dot`, or a summary in
words when the graph is too large to lay out in time), the cost table, the timings, the
profile (a table of the blocks and a roofline, :mod:`fusionlab.explore.viz.roofline`), and the
generated code folded away. Every string from the data is escaped; the graph's SVG comes from
Graphviz, which escapes its labels, and the roofline's is written from numbers and escaped text.

>>> from fusionlab.ir.examples import fig3
>>> from fusionlab.explore.report import get_report
>>> html = fallback_html(get_report(fig3(), algorithms=["greedy"], cost_models=["bohrium"]))
>>> html.startswith('<div class="fl-fallback"'), "greedy / bohrium: 4 blocks" in html
(True, True)
"""

from __future__ import annotations

from html import escape
from typing import Any, Mapping

from fusionlab.explore.report import find_entry
from fusionlab.explore.viz.contraction import contraction_title, nest_html, term_html
from fusionlab.explore.viz.roofline import profile_html
from fusionlab.explore.viz.steps import steps_html
from fusionlab.explore.viz.svg import svg_image
from fusionlab.explore.viz.listing import (
    code_html, cost_table_html, listing_html, notices_html, partition_summary, status_line,
    timing_table_html,
)

__all__ = ["fallback_html", "graph_summary", "selected_entry"]


def selected_entry(report: Mapping[str, Any]) -> dict[str, Any]:
    """The selected partition's entry."""
    sel = report["selected"]
    return find_entry(report, sel["algorithm"], sel["cost_model"])


def graph_summary(report: Mapping[str, Any], entry: Mapping[str, Any]) -> str:
    """The graph in words, when it is not drawn (plain text)."""
    g = report["graph"]
    n = len(report["program"]["instructions"])
    deps, forb = len(g["dependencies"]), len(g["forbidden"])
    kept = "" if deps + forb >= g["edges_total"] else f" (the report keeps {deps + forb} of {g['edges_total']})"
    return (f"WSP graph: {n} instructions, {deps} dependencies and {forb} fuse-preventing edges{kept}; "
            f"{len(entry['blocks'])} blocks in {entry['algorithm']} / {entry['cost_model']}, "
            f"{entry.get('weights_total', len(entry['weights']))} weight edges")


def fallback_html(report: Mapping[str, Any], graph_svg: str | None = None, graph_note: str = "") -> str:
    """The fallback page of ``report``; ``graph_svg`` is the laid-out graph (trusted SVG
    from Graphviz) or ``None``, and ``graph_note`` says why it is missing or which level
    it shows."""
    entry = selected_entry(report)
    batch = report["batches"][report["batch"]] if report["batches"] else {"index": 0, "instructions": 0}
    title = f"fusionlab{': ' + report['name'] if report['name'] else ''} — batch {report['batch'] + 1} of " \
            f"{len(report['batches'])}, {len(report['program']['instructions'])} instructions"
    st = report["status"]
    colour = "#b91c1c" if st["interrupted"] else ("#15803d" if st["complete"] else "#1d4ed8")
    parts = [
        f'<div class="fl-fallback" data-report-id="{escape(report["id"])}" data-batch="{batch["index"]}" '
        f'style="font-family:sans-serif;font-size:13px;max-width:100%">',
        f"<div><b>{escape(title)}</b></div>",
        f'<div class="fl-status" style="color:{colour}">{escape(status_line(report))}</div>',
        f"<div><b>{escape(partition_summary(entry))}</b></div>",
        "".join(f"<div>note: {escape(n)}</div>" for n in entry["notes"]),
        notices_html(report),
        f"<h4>Bytecode</h4>{listing_html(report, entry)}" if entry["blocks"] else "",
        "<h4>WSP graph</h4>",
    ]
    if graph_note:
        parts.append(f'<div style="font-size:90%;color:#4b5563">{escape(graph_note)}</div>')
    if graph_svg:
        parts.append(f'<div class="fl-graph" style="min-height:300px;max-height:40em;overflow:auto">'
                     f'{svg_image(graph_svg, "the WSP graph of " + partition_summary(entry))}</div>')
    else:
        parts.append(f"<div>{escape(graph_summary(report, entry))}</div>")
    parts.append(f"<h4>Cost of each partition</h4>{cost_table_html(report)}")
    parts.append(steps_html(report))
    if report["timings"]:
        parts.append(f"<h4>Run time</h4>{timing_table_html(report['timings'], len(report['batches']))}")
    if report.get("profile"):
        parts.append(f"<h4>Profile: each block, measured and predicted</h4>"
                     f"{profile_html(report['profile'], image=True)}")
    parts += [_contraction_html(c) for c in report.get("contractions") or []]
    if report["code"]:
        parts.append(f"<details><summary>Generated code ({len(report['code'])} blocks)</summary>"
                     f"{code_html(report)}</details>")
    parts.append('<div style="font-size:90%;color:#6b7280">A static view: JupyterLab with the fusionlab '
                 "extension draws the interactive explorer; <code>_fuse.widgets()</code> gives controls "
                 "in other front ends with a live kernel.</div></div>")
    return "".join(parts)


def _contraction_html(entry: Mapping[str, Any]) -> str:
    """A contraction's start term and loop nest, and how many arrangements the rules reach
    (the extension and the widgets apply the rules one by one)."""
    start = entry["start"]
    return (f"<h4>Contraction: {escape(contraction_title(entry))}</h4>"
            f"<div>{len(entry['terms'])} arrangements reachable by the rewrite rules of paper 003 "
            f"({len(entry['edges'])} rule applications); the captured one:</div>"
            f"{term_html(entry, start)}{nest_html(entry, start)}")
