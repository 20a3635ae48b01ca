"""Block colours: distinct for any count, near hues told apart by tone, the same rule in Python,
the extension's TypeScript and its style sheet (issue 35: "b9 looks like b1")."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

from fusionlab.explore import palette
from fusionlab.explore.palette import TONES, block_colour, block_hsl, colour_of
from fusionlab.explore.report import PALETTE

ROOT = Path(__file__).resolve().parents[1]


def hue_distance(a: float, b: float) -> float:
    d = abs(a - b) % 360.0
    return min(d, 360.0 - d)


def luminance(hex_colour: str) -> float:
    """WCAG relative luminance of ``#rrggbb``."""
    def channel(c: int) -> float:
        s = c / 255.0
        return s / 12.92 if s <= 0.03928 else ((s + 0.055) / 1.055) ** 2.4
    r, g, b = (int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def contrast(a: str, b: str) -> float:
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


@pytest.mark.parametrize("dark", [False, True])
def test_144_blocks_get_144_colours(dark: bool) -> None:
    colours = [block_colour(k, dark=dark) for k in range(1, 145)]
    assert len(set(colours)) == 144


@pytest.mark.parametrize("dark", [False, True])
def test_blocks_with_near_hues_differ_in_tone(dark: bool) -> None:
    near = 0
    for a, b in itertools.combinations(range(1, 145), 2):
        ha, hb = block_hsl(a, dark=dark), block_hsl(b, dark=dark)
        if hue_distance(ha[0], hb[0]) < 14.0:   # 102 apart: 14.2°, the same tone
            near += 1
            assert ha[1:] != hb[1:], (a, b)
    assert near > 100   # the rule is exercised: many pairs among 144 blocks have near hues
    # neighbours are far apart on the wheel
    for k in range(1, 144):
        assert hue_distance(block_hsl(k)[0], block_hsl(k + 1)[0]) > 130.0


def test_text_stays_readable_on_every_block() -> None:
    # WCAG's 4.5:1 for body text, against JupyterLab's text colours (black; about #e0e0e0 in dark)
    for k in range(1, 145):
        assert contrast(block_colour(k), "#000000") > 10.0, k
        assert contrast(block_colour(k, dark=True), "#e0e0e0") > 4.5, k


def test_report_palette_and_colour_of_follow_the_rule() -> None:
    listed = PALETTE["blocks"]
    assert listed == [block_colour(k) for k in range(1, len(listed) + 1)]
    report = {"palette": {"blocks": listed}}
    assert [colour_of(report, k) for k in range(1, 31)] == [block_colour(k) for k in range(1, 31)]
    assert colour_of({"palette": {"blocks": ["#123456"]}}, 1) == "#123456"
    with pytest.raises(ValueError, match="start at 1"):
        block_hsl(0)


def test_the_extension_computes_the_same_colours() -> None:
    ts = (ROOT / "extension" / "src" / "palette.ts").read_text()
    number = r"([0-9.]+)"
    assert float(re.search(rf"GOLDEN_ANGLE = {number}", ts).group(1)) == palette.GOLDEN_ANGLE
    assert float(re.search(rf"FIRST_HUE = {number}", ts).group(1)) == palette.FIRST_HUE
    assert int(re.search(rf"TONES = {number}", ts).group(1)) == TONES
    css = (ROOT / "extension" / "style" / "base.css").read_text()
    for dark in (False, True):
        prefix = r"\[data-jp-theme-light='false'\] " if dark else r"(?<!\] )"
        for tone in range(TONES):
            m = re.search(prefix + rf"\.fl-explorer \.fl-v{tone} {{ --fl-s: {number}%; --fl-l: {number}%; }}", css)
            assert m, (dark, tone)
            _, s, l = block_hsl(tone + 1, dark=dark)
            assert (float(m.group(1)) / 100, float(m.group(2)) / 100) == pytest.approx((s, l)), (dark, tone)
