"""HTML views of a report, for the kernel's views (the static fallback and the opt-in
widgets): the bytecode listing coloured by block, the cost table, the timing table, the
generated code and the notices. Costs are printed by :func:`fusionlab.explore.report.format_cost`
alone; colours come from the report's palette.

Every string that comes from the report (array names, literals, source, notes) is escaped
with :func:`html.escape`; the views build markup only from fusionlab's own templates.

>>> from fusionlab.ir.examples import fig3
>>> from fusionlab.explore.report import get_report
>>> r = get_report(fig3(), algorithms=["greedy"], cost_models=["bohrium"])
>>> html = listing_html(r, find_partition(r, "greedy", "bohrium"))
>>> html.count("<tr"), "fl-contracted" in html
(17, True)
>>> partition_summary(find_partition(r, "greedy", "bohrium"))
'greedy / bohrium: 4 blocks, cost 304 bytes (38 elements), legal'

"""

from __future__ import annotations

import re
from html import escape
from collections import Counter
from typing import Any, Mapping

from fusionlab.explore.report import EXACT_ALGORITHMS, find_entry, format_cost
from fusionlab.explore.palette import colour_of
from fusionlab.explore.notices import Level, by_level, level_of

#: the text colour of a notice by level (readable on white and on JupyterLab's dark theme)
_LEVEL_COLOURS = {"error": "#c62828", "warning": "#b45309", "info": "#64748b"}

__all__ = ["find_partition", "listing_html", "cost_table_html", "code_html", "notices_html",
           "partition_summary", "status_line", "timing_table_html", "format_seconds", "block_colour"]

#: the report's entry for an algorithm under a cost model (kept under its old name)
find_partition = find_entry

_STATUS_WORDS = {"pending": "pending", "budget": "cut by the time budget", "interrupted": "interrupted",
                 "error": "failed"}


#: a listing reads from the left: inline, because nbconvert's and JupyterLab's rendered-HTML
#: styles right-align table cells (and centre tables) and a class of ours does not outrank them
_LEFT = ' style="text-align:left"'

def block_colour(report: Mapping[str, Any], k: int) -> str:
    """The palette colour of block ``k`` (0-based): distinct for any number of blocks."""
    return colour_of(report, k + 1)


def partition_summary(entry: Mapping[str, Any]) -> str:
    """One line: blocks, cost, legality, optimality or why it is not known (plain text)."""
    head = f"{entry['algorithm']} / {entry['cost_model']}"
    status = entry.get("status", "done")
    if entry["cost"] is None:
        return f"{head}: {_STATUS_WORDS.get(status, status)}, no partition yet"
    cost = f"{format_cost(entry['cost'])} {entry['unit']}"
    if entry.get("cost_elements") is not None and entry["unit"] != "elements":
        cost += f" ({format_cost(entry['cost_elements'])} elements)"
    if not entry["blocks"]:
        return f"{head}: empty program (0 instructions): nothing to partition"
    verdict = "legal" if entry["legal"] else "ILLEGAL"
    if entry["algorithm"] in EXACT_ALGORITHMS:
        if entry["proven_optimal"]:
            verdict += ", proven optimal"
        else:
            bound = ""
            if entry.get("bound") is not None:
                bound = f"; lower bound {format_cost(entry['bound'])}"
                if entry["cost"]:  # how far the best found may be from the optimum
                    bound += f", gap {(entry['cost'] - entry['bound']) / entry['cost'] * 100:.1f}%"
            verdict += f", not proven optimal (best so far{bound})"
    elif status == "budget":
        verdict += ", cut by the time budget (best so far)"
    return f"{head}: {len(entry['blocks'])} blocks, cost {cost}, {verdict}"


def status_line(report: Mapping[str, Any]) -> str:
    """The progress line of a report: the phase, what is pending, and the time spent."""
    st = report["status"]
    spent = f"{st['elapsed_seconds']:.1f} s"
    if st["budget_seconds"] is not None:
        spent += f" of a {st['budget_seconds']:g} s budget"
    cut = [p for p in report["partitions"] if p.get("status") in ("budget", "interrupted", "error")]
    tail = f"; {len(cut)} partition(s) cut short (best so far shown, not proven)" if cut else ""
    if st["interrupted"]:
        return f"interrupted during {st['phase']} after {spent}: showing what was computed{tail}"
    if st["complete"]:
        return f"complete in {spent}{tail}"
    return f"computing: {st['phase']} ({len(st['pending'])} partition(s) pending, {spent})"


def listing_html(report: Mapping[str, Any], entry: Mapping[str, Any]) -> str:
    """The bytecode, one row per instruction, coloured by its block in ``entry``;
    arrays the block contracts are underlined (they are never allocated)."""
    block_of: dict[int, int] = {}
    for k, b in enumerate(entry["blocks"]):
        for n in b:
            block_of[n] = k
    rows = []
    contracted_of = [set(c) for c in entry["contracted"]]
    for ins in report["program"]["instructions"]:
        k = block_of.get(ins["n"], 0)
        # only the arrays this instruction names (a big block contracts hundreds)
        named = set(ins["outputs"]) | set(ins["inputs"])
        contracted = named & contracted_of[k] if k < len(contracted_of) else set()
        text = escape(ins["text"])
        for name in sorted(contracted, key=len, reverse=True):
            # names are identifiers; mark whole-word occurrences only
            text = _mark_word(text, escape(name))
        colour = block_colour(report, k)
        rows.append(
            f'<tr class="fl-row" data-instruction="{ins["n"]}" data-block="{k + 1}" style="background:{colour}">'
            f'<td class="fl-n"{_LEFT}>{ins["n"]}</td><td class="fl-b"{_LEFT}>[{k + 1}]</td>'
            f'<td class="fl-code"{_LEFT}><code>{text}</code></td></tr>'
        )
    legend = ('<div class="fl-legend" style="font-size:90%;margin:4px 0"><u>underlined</u>: '
              'contracted array (created and freed inside its block: a scalar, never allocated)</div>')
    # long listings scroll inside their pane instead of growing the page
    return (f'<div class="fl-listing"><div><b>{escape(partition_summary(entry))}</b></div>{legend}'
            f'<div style="max-height:28em;overflow:auto">'
            f'<table style="border-collapse:collapse;font-family:monospace;margin:0">{"".join(rows)}</table>'
            '</div></div>')


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
        legal = [p["cost"] for p in report["partitions"]
                 if p["cost_model"] == m and p["legal"] and p["cost"] is not None]
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
            if p["cost"] is None:
                cells.append(f'<td style="text-align:right;padding:0 8px;color:#6b7280">'
                             f'{escape(_STATUS_WORDS.get(p["status"], p["status"]))}</td>')
                continue
            mark = "*" if p["proven_optimal"] else ("†" if p["status"] != "done" else "")
            v = escape(f"{format_cost(p['cost'])}{mark} ({len(p['blocks'])})")
            if p["legal"] and best[m] is not None and p["cost"] == best[m]:
                v = f"<b>{v}</b>"
            cells.append(f'<td style="text-align:right;padding:0 8px">{v}</td>')
        rows.append(f"<tr><th style='text-align:left'>{escape(a)}</th>{''.join(cells)}</tr>")
    units = ", ".join(f"{escape(m)}: {escape(_unit(report, m))}" for m in models)
    return (f'<table class="fl-costs" style="margin:0"><tr><th></th>{head}</tr>{"".join(rows)}</table>'
            f'<div style="font-size:90%">cost (blocks); * proven optimal; † cut by the time budget or '
            f'interrupted: best so far, not proven; bold: cheapest. Units: {units}.</div>')


def format_seconds(seconds: float | None) -> str:
    """A duration with its unit (s, ms or µs), three significant digits.

    >>> format_seconds(0.0123), format_seconds(2.5e-5), format_seconds(1.5), format_seconds(None)
    ('12.3 ms', '25 µs', '1.5 s', '—')
    """
    if seconds is None:
        return "—"
    if seconds >= 1:
        return f"{seconds:.3g} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds * 1e6:.3g} µs"


def timing_table_html(timings: Mapping[str, Any], batches: int = 1) -> str:
    """Each timed variant's minimum, median, the ``time`` cost model's prediction and spread
    (with units), speed-up with its interval (≈: not different from another row; n/c: not
    comparable), blocks and Numba kernels over the whole cell, the thread count, how the
    rounds ran and the warnings. A row not timed shows "—" where it has no figure."""
    rows = []
    # rows with the same kernels share one timing: their overlap is no finding (as format_records)
    owner = {f"{r['algorithm']} / {r['cost_model']}": r.get("same_kernels_as") or f"{r['algorithm']} / {r['cost_model']}"
             for r in timings["records"] if r["cost_model"] != "numpy"}
    for r in timings["records"]:
        numpy = r["cost_model"] == "numpy"
        mine = r.get("same_kernels_as") or f"{r['algorithm']} / {r['cost_model']}"
        apart = [o for o in r.get("not_different") or [] if owner.get(o) != mine]
        untimed = bool(r.get("not_timed"))
        spread = "—" if r.get("spread") is None else f"{r['spread'] * 100:.0f}%"
        if r.get("not_comparable"):
            speed = "not comparable"
        elif r.get("speedup") is None or untimed:
            speed = "—"
        else:
            speed = f"{r['speedup']:.2f}×"
            if r.get("speedup_low") is not None and r.get("speedup_high") is not None and not numpy:
                speed += f" ({r['speedup_low']:.2f}–{r['speedup_high']:.2f})"
            if apart:
                speed += " ≈"
        err = "" if r.get("max_abs_error") is None else format(r["max_abs_error"], ".1e")
        blocks = "" if numpy else ("—" if r.get("blocks") is None else str(r["blocks"]))
        kernels = "" if numpy else ("—" if r.get("kernels") is None else str(r["kernels"]))
        label = "NumPy eager" if numpy else f"{r['algorithm']} / {r['cost_model']}"
        if r.get("same_kernels_as"):
            label += f" (same kernels as {r['same_kernels_as']})"
        cells = [label, format_seconds(r.get("min_seconds")), format_seconds(r.get("median_seconds")),
                 format_seconds(r.get("predicted_seconds")), spread, speed, blocks, kernels, err]
        rows.append("<tr>" + "".join(f"<td style='text-align:{'left' if i == 0 else 'right'};padding:0 6px'>"
                                     f"{escape(c)}</td>" for i, c in enumerate(cells)) + "</tr>")
    head = "".join(f"<th>{escape(h)}</th>" for h in (
        "variant", "min", "median", "time model predicted", "spread (IQR / median)",
        "speed-up (median, 95% interval)", f"blocks (all {batches} batches)", "Numba kernels (all batches)",
        "max abs error"))
    threads = timings.get("threads")
    protocol = timings.get("protocol") or {}
    if protocol:
        meta = (f"{protocol.get('rounds', '?')} interleaved rounds (order rotated each round) after "
                f"{protocol.get('warmup_rounds', 0)} warm-up round(s), each variant warmed up first (compilation "
                f"excluded); {protocol.get('draws_note', '')}; "
                f"{protocol['allocator'] + '; ' if protocol.get('allocator') else ''}interval: {protocol.get('interval', '')}; "
                "≈: not different from another row or from NumPy (the intervals overlap)")
    else:
        meta = f"{timings.get('repeat', '?')} timed runs per variant after a warm-up (compilation excluded)"
    if threads:
        meta += f"; {threads} thread(s)"
    warnings = list(timings.get("warnings", []))
    for r in timings["records"]:
        warnings += [f"{r['algorithm']} / {r['cost_model']}: {w}" for w in r.get("warnings", [])]
        warnings += [f"{r['algorithm']} / {r['cost_model']} is slower than NumPy: {w.get('detail', '')}"
                     for w in r.get("why_slower") or []]
    if protocol.get("not_comparable"):
        warnings.insert(0, protocol["not_comparable"])
    warn = "".join(f'<div style="color:#b45309">⚠ {escape(str(w))}</div>' for w in warnings)
    return (f'<table class="fl-timings" style="margin:0"><tr>{head}</tr>{"".join(rows)}</table>'
            f'<div style="font-size:90%">{escape(meta)}</div>{warn}')


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


def _detail(notice: Mapping[str, Any]) -> str:
    """The expert's version of a notice (a pass's record, with its views) behind a toggle."""
    detail = notice.get("detail")
    if not isinstance(detail, str) or not detail:
        return ""
    return f'<details class="fl-notice-detail"><summary>details</summary><code>{escape(detail)}</code></details>'


def notices_html(report: Mapping[str, Any]) -> str:
    """The report's notices, errors first, each with its level and the user's line; unfolded
    when a warning or an error is among them (:mod:`fusionlab.explore.notices`)."""
    if not report["notices"]:
        return ""
    items = []
    for n in by_level(report["notices"]):
        level = level_of(n).value
        where = f" (line {n['line']})" if n.get("line") else ""
        items.append(f'<li class="fl-level-{level}" style="color:{_LEVEL_COLOURS[level]}">'
                     f'<b>{level}</b>{escape(where)}: {escape(n["message"])} <i>({escape(n["kind"])})</i>'
                     f'{_detail(n)}</li>')
    # a notice that changes what the user should do next opens the list
    urgent = any(level_of(n) is not Level.INFO for n in report["notices"])
    counts = Counter(level_of(n).value for n in report["notices"])
    summary = ", ".join(f"{counts[v]} {v}{'s' if counts[v] > 1 and v != 'info' else ''}"
                        for v in (lv.value for lv in Level) if counts[v])
    return (f'<details class="fl-notices"{" open" if urgent else ""}><summary>notices: {summary}</summary>'
            f'<ul>{"".join(items)}</ul></details>')
