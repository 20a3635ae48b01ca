"""The report's replay and waterfall as static HTML, for the fallback view (no script).

The extension plays greedy's merges with the keyboard and lets the reader choose the two
partitions of a waterfall (``extension/src/steps.ts``); a static page shows, for the selected
cost model, the waterfall from the first partition of the cost table to the selected one (or
to greedy's, when the selected one is the first), and greedy's merges in a folded list. Both
rebuild each step's blocks from the first partition, as the extension does.

Examples
--------
>>> from fusionlab.explore.report import get_report
>>> from fusionlab.ir.examples import fig3
>>> html = steps_html(get_report(fig3(), algorithms=["singleton", "greedy"], cost_models=["bohrium"]))
>>> "merge {5} into {1}" in html and "−448" in html
True
"""

from __future__ import annotations

from html import escape
from typing import Any, Mapping, Sequence

__all__ = ["steps_html", "replayed"]


def _label(ins: Sequence[int]) -> str:
    out: list[str] = []
    sorted_ins = sorted(ins)
    k = 0
    while k < len(sorted_ins):
        j = k
        while j + 1 < len(sorted_ins) and sorted_ins[j + 1] == sorted_ins[j] + 1:
            j += 1
        out.append(f"{sorted_ins[k]}–{sorted_ins[j]}" if j > k else str(sorted_ins[k]))
        k = j + 1
    return "{" + ", ".join(out) + "}"


def replayed(start: Sequence[Sequence[int]], steps: Sequence[Mapping[str, Any]]) -> list[str]:
    """Each step of a listing in words, replayed from the blocks ``start`` (1-based).

    >>> replayed([[1], [2], [3]], [{"kind": "merge", "into": 1, "moved": [[3, 3]], "cost": 0}])
    ['merge {3} into {1}']
    """
    group = {i: k for k, b in enumerate(start) for i in b}
    members = {k: set(b) for k, b in enumerate(start)}
    fresh = len(start)
    out = []
    for s in steps:
        moved = {i for a, b in s["moved"] for i in range(a, b + 1)}
        k = group[s["into"]]
        if s["kind"] == "merge":
            into = sorted(members[k])
            members.pop(group[next(iter(moved))], None)
            members[k] |= moved
            for i in moved:
                group[i] = k
            out.append(f"merge {_label(sorted(moved))} into {_label(into)}")
        else:
            members[k] -= moved
            members[fresh] = set(moved)
            for i in moved:
                group[i] = fresh
            fresh += 1
            out.append(f"split {_label(sorted(moved))} off {_label(sorted(members[k]))}")
    return out


def _signed(x: float) -> str:
    return f"+{x:,.6g}" if x > 0 else (f"−{-x:,.6g}" if x < 0 else "0")


def _table(start: Sequence[Sequence[int]], listing: Mapping[str, Any]) -> str:
    steps = listing["steps"]
    rows, before = [], listing["cost_before"]
    for what, s in zip(replayed(start, steps), steps):
        change = (s["cost"] - before) if isinstance(s["cost"], (int, float)) and isinstance(before, (int, float)) else 0
        cost = s["cost"]
        after = f"{cost:,.6g}" if isinstance(cost, (int, float)) else "?"
        rows.append(f"<tr><td style='text-align:left'>{escape(what)}</td><td>{escape(_signed(change))}</td>"
                    f"<td>{escape(after)}</td></tr>")
        before = s["cost"]
    more = (f"<div>the first {len(steps)} of {listing['total']:,} steps</div>" if listing["total"] > len(steps) else "")
    return ("<table class='fl-waterfall' style='border-collapse:collapse;text-align:right;margin:0'>"
            "<tr><th style='text-align:left'>step</th><th>change</th><th>cost after</th></tr>"
            f"{''.join(rows)}</table>{more}")


def steps_html(report: Mapping[str, Any]) -> str:
    """The selected cost model's waterfall and greedy's replay ("" when the report has none)."""
    steps = report.get("steps") or {}
    model = report["selected"]["cost_model"]
    entries = {p["algorithm"]: p for p in report["partitions"] if p["cost_model"] == model}
    parts = []
    falls = [w for w in steps.get("waterfalls", []) if w["cost_model"] == model]
    chosen = report["selected"]["algorithm"]
    fall = next((w for w in falls if chosen in w["b"]), None) or next((w for w in falls if "greedy" in w["b"]), None)
    if fall is not None and fall["a"][0] in entries:
        total = fall["cost_after"] - fall["cost_before"]
        parts.append(
            f"<h4>Fusion waterfall: {escape(' = '.join(fall['a']))} to {escape(' = '.join(fall['b']))} "
            f"under {escape(model)}</h4>{_table(entries[fall['a'][0]]['blocks'], fall)}"
            f"<div>{len(fall['steps'])} steps, their sum: <b>{escape(_signed(total))}</b> = "
            f"{fall['cost_after']:,.6g} − {fall['cost_before']:,.6g}</div>")
    replay = next((r for r in steps.get("replays", []) if r["cost_model"] == model), None)
    if replay is not None:
        n = len(report["program"]["instructions"])
        parts.append(f"<details><summary>Greedy's merges under {escape(model)}, one at a time "
                     f"({replay['total']:,})</summary>{_table([[i] for i in range(1, n + 1)], replay)}</details>")
    return "".join(parts)
