"""Compile & time and Profile as the extension draws them, in a real browser, on reports a
kernel measured (issue 34): what the table says is what the comparison measured.

* Two cost models whose partitions have the same kernels: the second row says "same
  kernels as ..." and was timed once; every speed-up carries its interval and ``≈`` when
  the intervals overlap; the protocol line states the rounds, the warm-ups and the draws.
* A cell whose work runs outside the recording (fields of a structured array): its rows
  say "not comparable", never a ratio.
* The profile: one row per block, a roofline point per block with flops and bytes (the
  others named under the chart), the time model's error; a block's label full of markup
  stays text.
"""

from __future__ import annotations

import copy
import math
from typing import Any

import pytest

from fusionlab.capture import capture
from fusionlab.explore.jupyter.session import FuseResult
from fusionlab.explore.report import validate_report
from fusionlab.explore.viz.roofline import roofline_points

from .reports import report_notebook
from .test_explorer_browser import explorer, open_lab, open_notebook

SORTED = """
import numpy as np
a = np.arange(200_000.)
b = a * 2.0
c = b + 1.0
d = np.sqrt(c)
e = np.sort(d)
total = e.sum() + d.sum()
"""

FIELDS = """
import numpy as np
Z = np.zeros((256, 256), [('U', float), ('V', float)])
U, V = Z['U'], Z['V']
for _ in range(40):
    U += 0.5 * V + 1.0
    V += 0.25 * U
W = np.ones((64, 64))
t = (W * 2.0 + 1.0).sum()
"""


def _measured(source: str, cost_models: list[str], profile: bool) -> dict[str, Any]:
    cell = capture(source)
    res = FuseResult(cell.batches, capture=cell, name="timed", algorithms=["greedy"], cost_models=cost_models)
    res.time(repeat=3)
    if profile:
        res.profile(repeat=2)
    report = res.report()
    validate_report(report)
    return report


@pytest.fixture(scope="module")
def sorted_report() -> dict[str, Any]:
    return _measured(SORTED, ["bohrium", "max_contract"], profile=True)


def _label(r: dict[str, Any]) -> str:
    return f"{r['algorithm']} / {r['cost_model']}"


def _speedup(r: dict[str, Any], records: list[dict[str, Any]]) -> str:
    """The speed-up cell as the table must write it, from the records alone (a row is not
    told apart from one with its own kernels: they share one timing)."""
    owner = {_label(x): x["same_kernels_as"] or _label(x) for x in records if x["cost_model"] != "numpy"}
    mine = r["same_kernels_as"] or _label(r)
    apart = [o for o in r["not_different"] if owner.get(o) != mine]
    if r["not_comparable"]:
        return "not comparable"
    if r["speedup"] is None or (isinstance(r["speedup"], float) and math.isnan(r["speedup"])) or r["not_timed"]:
        return "—"
    text = f"{r['speedup']:.2f}×"
    if r["cost_model"] != "numpy" and r["speedup_low"] is not None and r["speedup_high"] is not None:
        text += f" ({r['speedup_low']:.2f}–{r['speedup_high']:.2f})"
    if r["cost_model"] != "numpy" and apart:
        text += " ≈"
    return text


def test_the_timings_table_says_what_the_comparison_measured(page, lab, lab_root, output_dir, sorted_report):
    report = sorted_report
    records = report["timings"]["records"]
    same = [r for r in records if r["same_kernels_as"]]
    assert same, "the two cost models' partitions should share their kernels"
    report_notebook(lab_root / "timed.ipynb", report)
    open_lab(page, lab)
    open_notebook(page, "timed.ipynb")
    root = explorer(page)
    rows = root.locator("table.fl-timings tbody tr")
    assert rows.count() == len(records)
    for k, r in enumerate(records):
        row = rows.nth(k)
        assert row.locator(".fl-speedup").inner_text() == _speedup(r, records)
        assert row.get_attribute("data-fl-same-kernels-as") == (r["same_kernels_as"] or None)
    row = rows.nth(records.index(same[0]))
    assert f"same kernels as {same[0]['same_kernels_as']}" in row.inner_text()
    protocol = root.locator(".fl-protocol").inner_text()
    rounds = report["timings"]["protocol"]["rounds"]
    assert f"{rounds} interleaved rounds (order rotated each round)" in protocol
    assert report["timings"]["protocol"]["draws_note"] in protocol
    assert "bootstrap" in protocol
    # the button asks for compare's default number of runs; Profile sits beside it
    assert root.locator("[data-fl-control='repeat']").input_value() == "5"
    assert root.locator("[data-fl-action='profile']").count() == 1
    root.locator(".fl-timings-wrap").screenshot(path=str(output_dir / "timings.png"))
    assert not page.page_errors


def test_the_profile_and_its_roofline(page, lab, lab_root, output_dir, sorted_report):
    report = copy.deepcopy(sorted_report)
    profile = report["profile"]
    opaque = next(k for k in profile["kernels"] if k["runs"] == "opaque")
    fused = next(k for k in profile["kernels"] if k["flops"] and k["bytes"])
    fused["label"] = '<img src=x onerror="window.__pwned=1">'
    points, off = roofline_points(profile)
    report_notebook(lab_root / "profiled.ipynb", report)
    open_lab(page, lab)
    open_notebook(page, "profiled.ipynb")
    root = explorer(page)
    section = root.locator("[data-fl-section='profile']")
    assert section.locator("table.fl-profile tbody tr").count() == len(profile["kernels"])
    number = f"{fused['batch']}.{fused['block']}"
    row = section.locator(f"table.fl-profile tbody tr[data-block='{number}']")
    assert row.locator("td").last.inner_text() == fused["label"]
    ratio = fused["predicted_seconds"] / fused["measured_seconds"]
    assert row.locator(".fl-ratio").inner_text() == f"{ratio:.2f}"
    svg = section.locator("svg.fl-roofline")
    assert svg.locator("g.fl-point").count() == len(points)
    assert svg.locator(f"g.fl-point[data-block='{number}'] circle.fl-measured").count() == 1
    assert svg.locator("circle.fl-predicted").count() == sum(1 for p in points if p["predicted"] is not None)
    assert svg.locator("line.fl-roof").count() >= 2   # memory and compute (the cache roof when above memory)
    assert f"{opaque['batch']}.{opaque['block']}" in section.locator(".fl-off-roofline").inner_text()
    assert len(off) >= 1
    med = profile["model_error"]["median_abs_log_ratio"]
    assert f"median |log(predicted / measured)| {med:.2f}" in section.locator(".fl-model-error").inner_text()
    assert page.evaluate("() => window.__pwned") is None
    svg.screenshot(path=str(output_dir / "roofline.png"))
    assert not page.page_errors


def test_work_outside_the_recording_is_not_comparable(page, lab, lab_root):
    report = _measured(FIELDS, ["bohrium"], profile=False)
    records = report["timings"]["records"]
    assert report["timings"]["protocol"]["not_comparable"]
    report_notebook(lab_root / "fields.ipynb", report)
    open_lab(page, lab)
    open_notebook(page, "fields.ipynb")
    root = explorer(page)
    rows = root.locator("table.fl-timings tbody tr")
    assert rows.count() == len(records)
    for k, r in enumerate(records[1:], start=1):
        assert rows.nth(k).locator(".fl-speedup").inner_text() == "not comparable"
        assert rows.nth(k).locator(".fl-speedup").get_attribute("data-fl-not-comparable") == ""
    assert "not comparable: the cell's plain NumPy run" in root.locator(".fl-timing-warnings").inner_text()
    assert not page.page_errors
