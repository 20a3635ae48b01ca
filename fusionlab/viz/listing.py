"""HTML views of a report, for the kernel-side explorer: the bytecode listing coloured by
block, the cost table, the generated code and the notices.

Every string that comes from the report (array names, literals, source, notes) is escaped
with :func:`html.escape`; the views build markup only from fusionlab's own templates.

>>> from fusionlab.examples import fig3
>>> from fusionlab.report import get_report
>>> r = get_report(fig3(), algorithms=["greedy"], cost_models=["bohrium"])
>>> html = listing_html(r, find_partition(r, "greedy", "bohrium"))
>>> html.count("<tr"), "fl-contracted" in html
(17, True)
"""

from __future__ import annotations

import re
from html import escape
from typing import Any, Mapping

__all__ = ["PALETTE", "find_partition", "listing_html", "cost_table_html", "code_html", "notices_html",
           "partition_summary"]

PALETTE = ["#dbeafe", "#dcfce7", "#fef9c3", "#fde2e2", "#ede9fe", "#cffafe", "#ffedd5", "#e5e7eb"]


def find_partition(report: Mapping[str, Any], algorithm: str, cost_model: str) -> dict[str, Any]:
    """The report's partition entry for ``algorithm`` under ``cost_model``."""
    for p in report["partitions"]:
        if p["algorithm"] == algorithm and p["cost_model"] == cost_model:
            return p
    have = ", ".join(f"{p['algorithm']}/{p['cost_model']}" for p in report["partitions"])
    raise KeyError(f"no partition {algorithm}/{cost_model} in the report; it has {have}")


def partition_summary(entry: Mapping[str, Any]) -> str:
    """One line: blocks, cost, legality, optimality (plain text)."""
    cost = f"{entry['cost']:g} {entry['unit']}"
    if entry.get("cost_elements") is not None:
        cost += f" ({entry['cost_elements']:g} elements)"
    status = "legal" if entry["legal"] else "ILLEGAL"
    if entry["algorithm"] in ("optimal", "ilp", "exhaustive"):
        status += ", proven optimal" if entry["proven_optimal"] else ", not proven optimal"
    return f"{entry['algorithm']} / {entry['cost_model']}: {len(entry['blocks'])} blocks, cost {cost}, {status}"


def listing_html(report: Mapping[str, Any], entry: Mapping[str, Any]) -> str:
    """The bytecode, one row per instruction, coloured by its block in ``entry``;
    arrays the block contracts are underlined (they are never allocated)."""
    block_of: dict[int, int] = {}
    for k, b in enumerate(entry["blocks"]):
        for n in b:
            block_of[n] = k
    rows = []
    for ins in report["program"]["instructions"]:
        k = block_of.get(ins["n"], 0)
        contracted = set(entry["contracted"][k]) if k < len(entry["contracted"]) else set()
        text = escape(ins["text"])
        for name in sorted(contracted, key=len, reverse=True):
            # names are identifiers; mark whole-word occurrences only
            text = _mark_word(text, escape(name))
        colour = PALETTE[k % len(PALETTE)]
        rows.append(
            f'<tr class="fl-row" data-instruction="{ins["n"]}" data-block="{k + 1}" style="background:{colour}">'
            f'<td class="fl-n">{ins["n"]}</td><td class="fl-b">[{k + 1}]</td>'
            f'<td class="fl-code"><code>{text}</code></td></tr>'
        )
    legend = ('<div class="fl-legend" style="font-size:90%;margin:4px 0"><u>underlined</u>: '
              'contracted array (created and freed inside its block: a scalar, never allocated)</div>')
    return (f'<div class="fl-listing"><div><b>{escape(partition_summary(entry))}</b></div>{legend}'
            f'<table style="border-collapse:collapse;font-family:monospace">{"".join(rows)}</table></div>')


def _mark_word(text: str, name: str) -> str:
    return re.sub(rf"(?<![\w]){re.escape(name)}(?![\w])",
                  f'<u class="fl-contracted" title="contracted">{name}</u>', text)


def cost_table_html(report: Mapping[str, Any]) -> str:
    """Cost of every algorithm (rows) under every cost model (columns); the cheapest legal
    partition per model in bold, proven optima starred."""
    models = report["cost_models"]
    algorithms = [a for a in report["algorithms"]]
    best = {}
    for m in models:
        legal = [p["cost"] for p in report["partitions"] if p["cost_model"] == m and p["legal"]]
        best[m] = min(legal) if legal else None
    head = "".join(f"<th>{escape(m)}</th>" for m in models)
    rows = []
    for a in algorithms:
        cells = []
        for m in models:
            try:
                p = find_partition(report, a, m)
            except KeyError:
                cells.append("<td></td>")
                continue
            v = f"{p['cost']:g}" + ("*" if p["proven_optimal"] else "") + f" ({len(p['blocks'])})"
            v = escape(v)
            if p["legal"] and best[m] is not None and p["cost"] == best[m]:
                v = f"<b>{v}</b>"
            cells.append(f'<td style="text-align:right;padding:0 8px">{v}</td>')
        rows.append(f"<tr><th style='text-align:left'>{escape(a)}</th>{''.join(cells)}</tr>")
    units = ", ".join(f"{escape(m)}: {escape(_unit(report, m))}" for m in models)
    return (f'<table class="fl-costs"><tr><th></th>{head}</tr>{"".join(rows)}</table>'
            f'<div style="font-size:90%">cost (blocks); * proven optimal; bold: cheapest. Units — {units}.</div>')


def _unit(report: Mapping[str, Any], model: str) -> str:
    for p in report["partitions"]:
        if p["cost_model"] == model:
            return p["unit"]
    return ""


def code_html(report: Mapping[str, Any]) -> str:
    """The generated Numba kernel of every block of the selected partition."""
    parts = []
    for c in report["code"]:
        head = f"block {c['block']} — instructions {', '.join(map(str, c['instructions']))}"
        if c["runs"] == "numpy":
            head += f" — runs with NumPy: {c['reason']}"
        elif c["contracted"]:
            head += f" — contracted: {', '.join(c['contracted'])}"
        body = c["source"] if c["source"] else "(no kernel: NumPy runs these instructions one by one)"
        parts.append(f'<div class="fl-kernel"><div><b>{escape(head)}</b></div>'
                     f'<pre style="font-size:85%;line-height:1.25">{escape(body)}</pre></div>')
    return "".join(parts)


def notices_html(report: Mapping[str, Any]) -> str:
    """The capture's notices (opaque calls, SYNCs, copies), with the user's line."""
    if not report["notices"]:
        return ""
    items = []
    for n in report["notices"]:
        where = f"line {n['line']}: " if n.get("line") else ""
        items.append(f"<li>{escape(where + n['message'])} <i>({escape(n['kind'])})</i></li>")
    return f'<details class="fl-notices"><summary>{len(items)} notice(s)</summary><ul>{"".join(items)}</ul></details>'
