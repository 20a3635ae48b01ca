"""The profile of a report (``report["profile"]``) drawn: a table of the blocks and a roofline.

The roofline is SVG written here, as the search tree's is (:mod:`fusionlab.explore.viz.tree`):
log-log axes of arithmetic intensity (flops per byte) and flops per second; the memory roof
(``memory_bytes_per_second`` x intensity) up to where it meets the compute roof
(``flops_per_second``), and the cache roof dashed; each block with floating-point work a
filled marker where it was measured and a hollow one where the ``time`` model put it, joined
by a line (the same intensity: the model's bytes and the bytecode's flops), labelled with its
``batch.block``. Blocks without flops or bytes (copies, gathers, opaque calls) have no point:
the note under the chart names them. The data come from the report only, a saved notebook's
included: every string is escaped and every number read as a number (anything else is
ignored), and the SVG has no script.

>>> from fusionlab.pipeline.profiling import BlockRuns, Ceilings, KernelTiming, Profile
>>> k = KernelTiming(1, 1, (1, 2), BlockRuns.KERNEL, True, 1e-3, 5e-4, 4_000_000, 4_000_000, 1_000_000, "memory",
...                  "<script>ADD</script>", elements=1_000_000)
>>> data = Profile((k,), 1.2e-3, 2e-4, Ceilings(3e10, 1e11, 5e10, "test"), 5).to_dict()
>>> svg = roofline_svg(data)
>>> svg.startswith("<svg"), "<script>" in svg, "&lt;script&gt;" in svg
(True, False, True)
"""

from __future__ import annotations

import math
from html import escape
from typing import Any, Mapping, Sequence

from fusionlab.explore.viz.listing import format_seconds

__all__ = ["roofline_svg", "profile_table_html", "profile_html", "RUNS_COLOUR", "roofline_points"]

#: a block's colour by what runs it
RUNS_COLOUR = {"kernel": "#2563eb", "numpy": "#6b7280", "opaque": "#d97706"}


def _num(x: Any) -> float | None:
    """``x`` as a finite float, or ``None`` (a saved report may hold anything)."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def _seconds(s: Any) -> str:
    """Seconds as every view writes them (:func:`~fusionlab.explore.viz.listing.format_seconds`)."""
    return format_seconds(_num(s))


def _rate(x: float | None, unit: str) -> str:
    if x is None:
        return "—"
    for scale, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if x >= scale:
            return f"{x / scale:.3g} {prefix}{unit}"
    return f"{x:.3g} {unit}"


def _number(k: Mapping[str, Any]) -> str:
    b, n = _num(k.get("batch")), _num(k.get("block"))
    return f"{int(b) if b is not None else '?'}.{int(n) if n is not None else '?'}"


def roofline_points(profile: Mapping[str, Any]) -> tuple[list[dict[str, Any]], list[Mapping[str, Any]]]:
    """The blocks on the chart, each ``{"kernel", "intensity", "measured", "predicted"}`` (flops
    per second; ``predicted`` ``None`` without a prediction), and the blocks that have no point
    (no flops, no bytes or no time).

    >>> pts, off = roofline_points({"kernels": [{"flops": 10, "bytes": 80, "measured_seconds": 1e-6,
    ...                                          "predicted_seconds": None}, {"flops": 0, "bytes": 8}]})
    >>> pts[0]["intensity"], pts[0]["measured"], len(off)
    (0.125, 10000000.0, 1)
    """
    points, off = [], []
    for k in profile.get("kernels") or []:
        if not isinstance(k, Mapping):
            continue
        flops, nbytes, measured = _num(k.get("flops")), _num(k.get("bytes")), _num(k.get("measured_seconds"))
        if not flops or not nbytes or not measured or flops <= 0 or nbytes <= 0 or measured <= 0:
            off.append(k)
            continue
        predicted = _num(k.get("predicted_seconds"))
        points.append({"kernel": k, "intensity": flops / nbytes, "measured": flops / measured,
                       "predicted": flops / predicted if predicted and predicted > 0 else None})
    return points, off


def _decades(lo: float, hi: float) -> tuple[float, float]:
    a, b = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    if b - a < 2:
        a, b = a - 1, b + 1
    return 10.0 ** a, 10.0 ** b


def _power(e: int) -> str:
    return f'10<tspan dy="-4" font-size="8">{e}</tspan>'


def roofline_svg(profile: Mapping[str, Any], width: int = 640, height: int = 380) -> str:
    """SVG text of the roofline of ``profile`` (the report's section): this machine's roofs
    and each block measured (filled) and predicted (hollow), joined by a line."""
    c = profile.get("ceilings") if isinstance(profile.get("ceilings"), Mapping) else {}
    memory = _num(c.get("memory_bytes_per_second")) or 1e10
    cache = _num(c.get("cache_bytes_per_second"))
    flops = _num(c.get("flops_per_second")) or memory
    points, _ = roofline_points(profile)
    ridge = flops / memory
    xs = [p["intensity"] for p in points] + [ridge]
    ys = [y for p in points for y in (p["measured"], p["predicted"]) if y] + [flops]
    x0, x1 = _decades(min(xs) / 2, max(xs) * 2)
    y0, y1 = _decades(min(ys) / 2, max(ys) * 2)
    left, right, top, bottom = 64, 16, 16, 62
    pw, ph = width - left - right, height - top - bottom

    def X(x: float) -> float:
        return left + pw * (math.log10(min(max(x, x0), x1)) - math.log10(x0)) / (math.log10(x1) - math.log10(x0))

    def Y(y: float) -> float:
        return top + ph * (1 - (math.log10(min(max(y, y0), y1)) - math.log10(y0)) / (math.log10(y1) - math.log10(y0)))

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="fl-roofline" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="10">',
           f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="#ffffff" stroke="#9ca3af"/>']
    for e in range(round(math.log10(x0)), round(math.log10(x1)) + 1):
        x = X(10.0 ** e)
        out.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{top + ph}" stroke="#e5e7eb"/>'
                   f'<text x="{x:.1f}" y="{top + ph + 14}" text-anchor="middle">{_power(e)}</text>')
    for e in range(round(math.log10(y0)), round(math.log10(y1)) + 1):
        y = Y(10.0 ** e)
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + pw}" y2="{y:.1f}" stroke="#e5e7eb"/>'
                   f'<text x="{left - 4}" y="{y + 3:.1f}" text-anchor="end">{_power(e)}</text>')
    out.append(f'<text x="{left + pw / 2:.1f}" y="{height - 30}" text-anchor="middle">arithmetic intensity '
               "(flops per byte moved)</text>"
               f'<text x="14" y="{top + ph / 2:.1f}" text-anchor="middle" transform="rotate(-90 14 {top + ph / 2:.1f})">'
               "flops per second</text>")

    def roof(bandwidth: float, dash: str, colour: str, name: str) -> None:
        start = max(x0, y0 / bandwidth)
        end = min(x1, flops / bandwidth)
        if start >= end:
            return
        xa, ya, xb, yb = X(start), Y(bandwidth * start), X(end), Y(bandwidth * end)
        out.append(f'<line class="fl-roof" x1="{xa:.1f}" y1="{ya:.1f}" x2="{xb:.1f}" y2="{yb:.1f}" stroke="{colour}" '
                   f'stroke-width="2"{dash}><title>{escape(name)}</title></line>')
        angle = math.degrees(math.atan2(yb - ya, xb - xa))
        out.append(f'<text x="{xa + 6:.1f}" y="{ya - 5:.1f}" fill="{colour}" transform="rotate({angle:.1f} {xa + 6:.1f} '
                   f'{ya - 5:.1f})">{escape(name)}</text>')

    if cache is not None and cache > memory:
        roof(cache, ' stroke-dasharray="5,3"', "#0d9488", f"cache {_rate(cache, 'B/s')}")
    roof(memory, "", "#b91c1c", f"memory {_rate(memory, 'B/s')}")
    out.append(f'<line class="fl-roof" x1="{X(max(ridge, x0)):.1f}" y1="{Y(flops):.1f}" x2="{X(x1):.1f}" y2="{Y(flops):.1f}" '
               f'stroke="#b91c1c" stroke-width="2"><title>{escape("compute " + _rate(flops, "FLOP/s"))}</title></line>'
               f'<text x="{X(x1) - 4:.1f}" y="{Y(flops) - 5:.1f}" text-anchor="end" fill="#b91c1c">'
               f'{escape("compute " + _rate(flops, "FLOP/s"))}</text>')
    for p in points:
        k = p["kernel"]
        runs = k.get("runs") if k.get("runs") in RUNS_COLOUR else "kernel"
        colour = RUNS_COLOUR[runs]
        x, ym = X(p["intensity"]), Y(p["measured"])
        number = _number(k)
        label = k.get("label") if isinstance(k.get("label"), str) else ""
        title = (f"block {number} ({label}), {runs}: measured {_seconds(k.get('measured_seconds'))} "
                 f"({_rate(p['measured'], 'FLOP/s')}), predicted {_seconds(k.get('predicted_seconds'))}; "
                 f"{p['intensity']:.3g} flops per byte")
        bound = k.get("bound")
        if isinstance(bound, str):
            title += f"; the model: {bound} bound"
        out.append(f'<g class="fl-point" data-block="{escape(number)}" data-runs="{escape(runs)}">'
                   f"<title>{escape(title)}</title>")
        if p["predicted"] is not None:
            yp = Y(p["predicted"])
            out.append(f'<line x1="{x:.1f}" y1="{ym:.1f}" x2="{x:.1f}" y2="{yp:.1f}" stroke="{colour}" '
                       'stroke-opacity="0.5"/>'
                       f'<circle class="fl-predicted" cx="{x:.1f}" cy="{yp:.1f}" r="4.5" fill="#ffffff" '
                       f'stroke="{colour}" stroke-width="1.5"/>')
        out.append(f'<circle class="fl-measured" cx="{x:.1f}" cy="{ym:.1f}" r="4.5" fill="{colour}"/>'
                   f'<text x="{x + 6:.1f}" y="{ym + 3:.1f}">{escape(number)}</text></g>')
    ly = height - 12
    out.append(f'<circle cx="{left + 6}" cy="{ly - 3}" r="4.5" fill="#2563eb"/>'
               f'<text x="{left + 14}" y="{ly}">measured</text>'
               f'<circle cx="{left + 86}" cy="{ly - 3}" r="4.5" fill="#ffffff" stroke="#2563eb" stroke-width="1.5"/>'
               f'<text x="{left + 94}" y="{ly}">predicted (time model)</text>'
               f'<text x="{left + 220}" y="{ly}" fill="{RUNS_COLOUR["kernel"]}">kernel</text>'
               f'<text x="{left + 262}" y="{ly}" fill="{RUNS_COLOUR["numpy"]}">NumPy</text>'
               f'<text x="{left + 304}" y="{ly}" fill="{RUNS_COLOUR["opaque"]}">opaque call</text>')
    out.append("</svg>")
    return "".join(out)


def profile_table_html(profile: Mapping[str, Any]) -> str:
    """The blocks of ``profile`` as an HTML table: block, what runs it, measured, predicted,
    their ratio, bytes, flops, the model's bound and the block's instructions."""
    head = "".join(f"<th>{escape(h)}</th>" for h in (
        "block", "runs", "measured", "predicted (time model)", "predicted / measured", "bytes", "flops", "bound",
        "instructions"))
    rows = []
    for k in profile.get("kernels") or []:
        if not isinstance(k, Mapping):
            continue
        measured, predicted = _num(k.get("measured_seconds")), _num(k.get("predicted_seconds"))
        ratio = f"{predicted / measured:.2f}" if predicted and measured else "—"
        nbytes, flops = _num(k.get("bytes")), _num(k.get("flops"))
        runs = str(k.get("runs", "")) + (" (parallel)" if k.get("parallel") is True else "")
        cells = [_number(k), runs, _seconds(measured), _seconds(predicted), ratio,
                 "—" if nbytes is None else f"{int(nbytes):,}", "—" if flops is None else f"{int(flops):,}",
                 str(k.get("bound") or "—"), str(k.get("label", ""))]
        rows.append("<tr>" + "".join(f"<td style='text-align:{'left' if i in (1, 7, 8) else 'right'};padding:0 6px'>"
                                     f"{escape(c)}</td>" for i, c in enumerate(cells)) + "</tr>")
    return f'<table class="fl-profile" style="margin:0"><tr>{head}</tr>{"".join(rows)}</table>'


def _list(items: Sequence[Mapping[str, Any]], text: Any) -> str:
    return "".join(f"<li>{escape(str(text(x)))}</li>" for x in items if isinstance(x, Mapping))


def profile_html(profile: Mapping[str, Any], image: bool = False) -> str:
    """The profile section of a view: what was profiled, the table, the roofline, the blocks
    not on it, why the run is slower than NumPy's and where the model misses most.
    ``image``: the roofline as an image (:func:`~fusionlab.explore.viz.svg.svg_image`: a static
    page of an untrusted notebook keeps it), else inline SVG (a live view's, with tooltips)."""
    from fusionlab.explore.viz.svg import svg_image

    chart = svg_image(roofline_svg(profile), "roofline of the profiled blocks", fit_width=False) if image \
        else roofline_svg(profile)
    run, numpy, between = profile.get("run_seconds"), profile.get("numpy_seconds"), profile.get("between_seconds")
    head = (f"{profile.get('algorithm', '')} / {profile.get('cost_model', '')}: each block's median of "
            f"{profile.get('repeat', '?')} block-by-block runs after a warm-up; a whole run takes {_seconds(run)}"
            + (f" (NumPy eager {_seconds(numpy)})" if _num(numpy) is not None else "")
            + f", {_seconds(between)} of it outside the blocks (the driver's Python, allocation)")
    c = profile.get("ceilings") if isinstance(profile.get("ceilings"), Mapping) else {}
    roofs = (f"roofs: memory {_rate(_num(c.get('memory_bytes_per_second')), 'B/s')}, cache "
             f"{_rate(_num(c.get('cache_bytes_per_second')), 'B/s')}, compute "
             f"{_rate(_num(c.get('flops_per_second')), 'FLOP/s')} — {c.get('label', '')}")
    _, off = roofline_points(profile)
    parts = [f"<div>{escape(head)}</div>", profile_table_html(profile),
             f'<div style="font-size:90%;color:#4b5563">{escape(roofs)}</div>',
             f'<div class="fl-roofline-view">{chart}</div>']
    if off:
        parts.append(f'<div style="font-size:90%;color:#4b5563">{escape("not on the roofline (no floating-point work or no bytes): blocks " + ", ".join(_number(k) for k in off))}</div>')
    why = [w for w in profile.get("why_slower") or [] if isinstance(w, Mapping)]
    if why:
        parts.append("<div><b>Why slower than NumPy</b></div><ul>"
                     + _list(why, lambda w: f"{w.get('reason', '')}, {_seconds(w.get('seconds'))}: {w.get('detail', '')}")
                     + "</ul>")
    err = profile.get("model_error") if isinstance(profile.get("model_error"), Mapping) else {}
    med = _num(err.get("median_abs_log_ratio"))
    if med is not None:
        parts.append(f"<div>{escape(f'the time model: median |log(predicted / measured)| {med:.2f} (a factor of {math.exp(med):.2f}); its largest misses:')}</div><ul>"
                     + _list(err.get("worst") or [], lambda w: f"block {_number(w)}: predicted "
                             f"{_seconds(w.get('predicted_seconds'))}, measured {_seconds(w.get('measured_seconds'))}"
                             f" — {w.get('reason', '')}") + "</ul>")
    return f'<div class="fl-profile-view">{"".join(parts)}</div>'
