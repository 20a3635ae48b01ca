"""Notices carry a level decided by their type (fusionlab/explore/notices.py), in every view."""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path

import jsonschema
import numpy as np
import pytest

from fusionlab.capture.recorder import Notice, NoticeKind
from fusionlab.explore.notices import CAPTURE_LEVELS, Level, ReportNotice, by_level, capture_notice, level_of, report_notice
from fusionlab.explore.viz.listing import notices_html

EXT = Path(__file__).resolve().parents[1] / "extension" / "src"


def test_every_capture_kind_has_a_level() -> None:
    assert set(CAPTURE_LEVELS) == set(NoticeKind)
    assert CAPTURE_LEVELS[NoticeKind.FAILED] is Level.ERROR
    assert CAPTURE_LEVELS[NoticeKind.OPAQUE] is Level.WARNING


def test_a_cut_search_is_information_and_a_missing_graph_a_warning() -> None:
    # the issue: the budget cutting an exact search is shown quietly; no graph at all is a warning
    assert ReportNotice.SEARCH_CUT.level is Level.INFO and ReportNotice.SEARCH_CUT.kind == "budget"
    assert ReportNotice.GRAPH_CUT.level is Level.WARNING and ReportNotice.GRAPH_CUT.kind == "budget"


def test_levels_sort_errors_first_and_keep_order_within_a_level() -> None:
    ns = [{"kind": "rewrite", "level": "info", "message": "r1"},
          {"kind": "opaque", "level": "warning", "message": "w1"},
          {"kind": "failed", "level": "error", "message": "e1"},
          {"kind": "window", "level": "info", "message": "r2"},
          {"kind": "plain", "level": "warning", "message": "w2"}]
    assert [n["message"] for n in by_level(ns)] == ["e1", "w1", "w2", "r1", "r2"]


@pytest.mark.parametrize("saved", [{"kind": "budget", "message": "m"}, {"kind": "x", "level": "loud", "message": "m"}])
def test_a_notice_saved_without_a_known_level_is_a_warning(saved: dict) -> None:
    assert level_of(saved) is Level.WARNING


def test_the_fallback_view_shows_levels_escaped_and_opens_on_a_warning() -> None:
    info = {"kind": "rewrite", "level": "info", "message": "<b>x</b>", "line": None}
    warn = capture_notice(Notice(NoticeKind.OPAQUE, "np.linalg.solve <script>", 7))
    html = notices_html({"notices": [info]})
    assert "<details class=\"fl-notices\">" in html and "&lt;b&gt;x&lt;/b&gt;" in html and "notices: 1 info" in html
    html = notices_html({"notices": [info, warn]})
    assert "<details class=\"fl-notices\" open>" in html and "<script>" not in html
    assert html.index("fl-level-warning") < html.index("fl-level-info")
    assert "(line 7)" in html and "notices: 1 warning, 1 info" in html


def test_a_report_carries_levels_that_the_schema_accepts() -> None:
    from fusionlab.explore.jupyter.session import FuseResult

    src = "import numpy as np\na = np.arange(1000.)\nb = np.linalg.norm(a) + a\nc = b * 2\n"
    from fusionlab.capture import capture

    cap = capture(src)
    res = FuseResult(cap.batches, capture=cap, name="n", algorithms=["greedy"], cost_models=["bohrium"])
    report = res.report()
    schema = json.loads(resources.files("fusionlab").joinpath("data/explorer.schema.json").read_text())
    jsonschema.validate(report, schema)
    assert report["notices"], report["notices"]
    assert all(n["level"] in ("error", "warning", "info") for n in report["notices"])
    kinds = {n["kind"]: n["level"] for n in report["notices"]}
    for n in cap.notices:
        assert kinds[n.kind.name.lower()] == CAPTURE_LEVELS[n.kind].value


def test_the_extension_knows_the_same_levels() -> None:
    ts = (EXT / "types.ts").read_text()
    listed = re.search(r"NOTICE_LEVELS = \[([^\]]*)\]", ts).group(1)
    assert [x.strip().strip("'") for x in listed.split(",")] == [lv.value for lv in Level]
    css = (EXT.parent / "style" / "base.css").read_text()
    assert all(f".fl-level-{lv.value}" in css for lv in Level)


def test_an_opaque_call_says_what_it_means() -> None:
    from fusionlab.capture import capture

    cap = capture("import numpy as np\na = np.arange(10.)\nb = np.sort(a) * 2\nc = np.linalg.norm(a) + a\n"
                  "d = np.frobnicate(a) if hasattr(np, 'frobnicate') else np.interp(a, a, a)\n")
    said = {n.message: capture_notice(n)["message"] for n in cap.notices if n.kind is NoticeKind.OPAQUE}
    assert said["np.sort"].startswith("np.sort runs as NumPy, never fused: a library routine")
    assert "LAPACK" in said["np.linalg.norm"]
    assert all(" runs as NumPy, never fused: " in m for m in said.values())
    from fusionlab.explore.notices import opaque_meaning
    assert opaque_meaning("np.fft.rfft").startswith("an FFT") and "does not know" in opaque_meaning("scipy.x")


def test_every_preparing_record_has_a_plain_meaning_and_keeps_its_own_line_as_detail() -> None:
    from fusionlab.explore.notices import REWRITE_MEANING, rewrite_notice
    from fusionlab.passes.rewrites import Rewrite, RewriteKind, RewritePass

    assert set(REWRITE_MEANING) == set(RewriteKind)
    for kind in RewriteKind:
        r = Rewrite(kind, 0, 3, f"record of {kind.name}: t7{{offset=0, strides=(0,160,1)}}", RewritePass.REROLL, 2)
        n = rewrite_notice(ReportNotice.REROLL, r, "p: ")
        assert n["message"] == REWRITE_MEANING[kind] and "{" not in n["message"]
        assert n["detail"] == f"p: record of {kind.name}: t7{{offset=0, strides=(0,160,1)}}"   # not numbered
        assert n["level"] == "info" and n["kind"] == "reroll"


def test_a_notice_without_detail_has_no_detail_key_and_the_views_escape_a_detail() -> None:
    from fusionlab.explore.viz.listing import notices_html

    assert "detail" not in report_notice(ReportNotice.WINDOW, "w")
    n = report_notice(ReportNotice.REWRITE, "plain", detail="<img src=x onerror=alert(1)>")
    html = notices_html({"notices": [n]})
    assert "<img" not in html and "&lt;img" in html and html.count('class="fl-notice-detail"') == 1
    assert "<details" in html and "plain" in html
