"""Matplotlib charts of a report: cost per algorithm x cost model (the paper's Fig. 14 for
one cell) and run time per cost model against NumPy (Fig. 18-20). Each returns SVG text
(glyphs drawn as paths, so no text from the data is interpreted by the browser).

>>> from fusionlab.ir.examples import fig3
>>> from fusionlab.explore.report import get_report
>>> svg = cost_chart_svg(get_report(fig3(), algorithms=["singleton", "greedy"], cost_models=["bohrium"]))
>>> svg.startswith("<svg")
True
"""

from __future__ import annotations

import io
from typing import Any, Mapping

__all__ = ["cost_chart_svg", "timing_chart_svg", "cost_figure", "timing_figure"]


def _figure(width: float, height: float) -> Any:
    from matplotlib.figure import Figure  # no pyplot: no global state, no GUI backend

    return Figure(figsize=(width, height), layout="constrained")


def cost_figure(report: Mapping[str, Any]) -> Any:
    """Grouped bars: for each cost model, each algorithm's cost relative to singleton's
    (costs of different models have different units; 1.0 is no fusion)."""
    fig = _figure(7.5, 3.2)
    ax = fig.add_subplot()
    models, algorithms = report["cost_models"], report["algorithms"]
    width = 0.8 / max(len(algorithms), 1)
    for j, a in enumerate(algorithms):
        heights = []
        for m in models:
            entries = {p["algorithm"]: p for p in report["partitions"] if p["cost_model"] == m}
            base = entries.get("singleton")
            p = entries.get(a)
            if p is None or p["cost"] is None:
                heights.append(0.0)  # not computed (pending or cut short): no bar
            elif base is None or not base["cost"]:
                heights.append(float(p["cost"]))
            else:
                heights.append(float(p["cost"]) / float(base["cost"]))
        ax.bar([i + j * width for i in range(len(models))], heights, width, label=a)
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(models))], models)
    ax.set_ylabel("cost / singleton cost")
    ax.set_title("Partition cost per algorithm and cost model")
    # the legend sits outside the axes, to the right: it never covers a bar
    fig.legend(fontsize=8, loc="outside right upper")
    ax.axhline(1.0, color="#888", lw=0.8)
    return fig


def timing_figure(timings: Mapping[str, Any]) -> Any:
    """Median run time of each timed partition and of NumPy eager (horizontal bars); rows
    not timed (the compile budget ran out, an interrupt) have no bar: the table says why."""
    records = [r for r in timings["records"] if r.get("median_seconds") is not None]
    fig = _figure(7.5, 0.45 * len(records) + 1.2)
    ax = fig.add_subplot()
    labels = [("NumPy eager" if r["cost_model"] == "numpy" else f"{r['algorithm']} / {r['cost_model']}")
              for r in records]
    ms = [r["median_seconds"] * 1e3 for r in records]
    lows = [max(r["median_seconds"] - (r.get("q1_seconds") or r["min_seconds"]), 0.0) * 1e3 for r in records]
    highs = [max((r.get("q3_seconds") or r["median_seconds"]) - r["median_seconds"], 0.0) * 1e3 for r in records]
    colours = ["#9ca3af" if r["cost_model"] == "numpy" else "#2563eb" for r in records]
    # whiskers: from the first quartile (the minimum when not measured) to the third
    ax.barh(range(len(records)), ms, color=colours, xerr=[lows, highs], ecolor="#111827", capsize=3)
    ax.set_yticks(range(len(records)), labels)
    ax.invert_yaxis()
    for i, r in enumerate(records):
        if r["cost_model"] != "numpy" and r.get("speedup"):
            ax.text(ms[i] + highs[i], i, f" {r['speedup']:.2f}×", va="center", fontsize=8)
    ax.set_xlabel(f"median run time, ms, of {timings.get('repeat', '?')} runs (compilation excluded); "
                  "whiskers: quartiles")
    ax.set_title("Run time against NumPy eager")
    return fig


def _svg(fig: Any) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg")
    text = buf.getvalue()
    k = text.find("<svg")
    return text[k:]


def cost_chart_svg(report: Mapping[str, Any]) -> str:
    """SVG of :func:`cost_figure`."""
    return _svg(cost_figure(report))


def timing_chart_svg(timings: Mapping[str, Any]) -> str:
    """SVG of :func:`timing_figure`."""
    return _svg(timing_figure(timings))
