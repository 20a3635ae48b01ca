"""HTML and SVG pieces of the contraction view, drawn from a contraction's data alone
(an entry of the report's ``contractions`` section, or :func:`fusionlab.explore.hof.view.get_contraction_data`).

Every string taken from the data is escaped; the chart's glyphs are paths.

Examples
--------
>>> from fusionlab.explore.hof.view import get_contraction_data
>>> d = get_contraction_data("ij,jk->ik", (4, 32), (32, 5))
>>> "map (\\\\a0 -&gt; map" in term_html(d, 0)
True
>>> [(e["rule"], e["position"]) for e in applicable(d, 0)]
[('map-map flip', 0), ('map-rnz exchange', 1)]
"""

from __future__ import annotations

from html import escape
from typing import Any, Mapping, Sequence

__all__ = ["applicable", "refused", "step_label", "term_html", "moves_html", "path_html", "nest_html",
           "contraction_title", "contraction_figure", "contraction_chart_svg"]


def applicable(data: Mapping[str, Any], term: int) -> list[dict[str, Any]]:
    """The edges leaving ``term``: the rules that apply there, in the data's order."""
    return [e for e in data["edges"] if e["source"] == term]


def refused(data: Mapping[str, Any], term: int) -> list[dict[str, Any]]:
    """The rules refused at ``term``, each with its position and reason."""
    return [r for r in data["refusals"] if r["term"] == term]


def step_label(step: Mapping[str, Any]) -> str:
    """``map-rnz exchange at level 1`` (``by 16`` for a subdivision), as the buttons say it."""
    by = "" if step.get("param") is None else f" by {step['param']}"
    return f"{step['rule']} at level {step['position']}{by}"


def contraction_title(data: Mapping[str, Any]) -> str:
    """``C = einsum("ij,jk->ik", A, B): A 4x32, B 32x5, float64`` (plain text)."""
    a, b = data.get("operands", ["A", "B"])
    out = data.get("output", "C")
    sa, sb = ("x".join(map(str, s)) for s in data["shapes"])
    many = data.get("instructions") or []
    where = (f"instructions {', '.join(map(str, many))}: " if len(many) > 1
             else f"instruction {data['n']}: " if "n" in data else "")
    return f'{where}{out} = einsum("{data["subscripts"]}", {a}, {b}): {a} {sa}, {b} {sb}, {data["dtype"]}'


def term_html(data: Mapping[str, Any], term: int) -> str:
    """The term as the paper prints it, its HoF order, loops, layouts and parallel form."""
    t = data["terms"][term]
    par = "parallel over its outermost map" if t["parallel"] else f"serial only: {t['parallel_reason']}"
    return (f'<div class="fl-term"><pre style="white-space:pre-wrap">{escape(t["text"])}</pre>'
            f"<div>term {t['id']} of {len(data['terms'])} · HoF order <b>{escape(' '.join(t['order']))}</b>"
            f" · loops <code>{escape(' '.join(t['loops']))}</code> · {escape(par)}</div>"
            f"<div>layouts: {escape(' ; '.join(t['views']))}</div></div>")


def moves_html(data: Mapping[str, Any], term: int) -> str:
    """The rules refused at ``term`` and why (the applicable ones are buttons)."""
    items = "".join(f"<li>{escape(step_label(r))}: {escape(r['message'])}</li>" for r in refused(data, term))
    return f'<details><summary>refused here ({len(refused(data, term))})</summary><ul>{items}</ul></details>'


def path_html(data: Mapping[str, Any], path: Sequence[int], steps: Sequence[Mapping[str, Any]]) -> str:
    """The derivation chain taken (``path`` of term ids, ``steps`` the edges between them),
    and the shortest derivation of the current term from the start."""
    rows = [f"<li>start: <code>{escape(' '.join(data['terms'][path[0]]['loops']))}</code></li>"]
    for k, s in enumerate(steps):
        eq = f" (eq. {s['equation']})" if s.get("equation") else ""
        rows.append(f"<li>{escape(step_label(s) + eq)} → "
                    f"<code>{escape(' '.join(data['terms'][path[k + 1]]['loops']))}</code></li>")
    short = data["terms"][path[-1]]["derivation"]
    shortest = " ; ".join(step_label(s) for s in short) or "(the start term)"
    return (f"<div><b>derivation</b><ol>{''.join(rows)}</ol>"
            f"<div>shortest from the start: {escape(shortest)}</div></div>")


def nest_html(data: Mapping[str, Any], term: int) -> str:
    """The generated Numba loop nest of ``term``."""
    return f'<pre style="font-size:85%;line-height:1.25">{escape(data["terms"][term]["nest"])}</pre>'


def contraction_figure(data: Mapping[str, Any], current: int | None = None) -> Any:
    """Horizontal bars: every arrangement's serial and parallel median time, NumPy's as a line."""
    from matplotlib.figure import Figure  # no pyplot: no global state, no GUI backend

    timings = data["timings"]
    recs = sorted(timings["records"], key=lambda r: min(x for x in (r["serial_seconds"], r["parallel_seconds"])
                                                        if x is not None))
    fig = Figure(figsize=(7.5, 0.22 * len(recs) + 1.4), layout="constrained")
    ax = fig.add_subplot()
    ys = range(len(recs))
    ax.barh([y - 0.2 for y in ys], [r["serial_seconds"] * 1e3 for r in recs], 0.4, label="serial",
            color=["#f59e0b" if r["term"] == current else "#2563eb" for r in recs])
    ax.barh([y + 0.2 for y in ys], [(r["parallel_seconds"] or 0.0) * 1e3 for r in recs], 0.4,
            label="parallel", color="#16a34a")
    ax.axvline(timings["numpy_seconds"] * 1e3, color="#dc2626", lw=1.2, label="NumPy (BLAS)")
    ax.set_yticks(list(ys), [" ".join(r["loops"]) for r in recs], fontsize=7)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlabel(f"median ms of {timings['repeat']} runs (log scale)")
    ax.set_title("Every arrangement against NumPy")
    ax.legend(fontsize=7, loc="lower right")
    return fig


def contraction_chart_svg(data: Mapping[str, Any], current: int | None = None) -> str:
    """SVG of :func:`contraction_figure` (empty when the contraction was not timed)."""
    import io

    if not data.get("timings"):
        return ""
    buf = io.StringIO()
    contraction_figure(data, current).savefig(buf, format="svg")
    text = buf.getvalue()
    return text[text.find("<svg"):]
