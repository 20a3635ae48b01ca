"""Block colours for any number of blocks, the same in every view.

A fixed list of colours repeats: with 8 colours block 9 looks like block 1. Here block
``k``'s hue is ``k`` turns of the golden angle (137.5°) from a blue, so no two blocks share
a hue and neighbours (``k`` and ``k + 1``) are far apart on the colour wheel. The hues that
do come close are those of blocks a Fibonacci number apart (13 apart: 12°, 21: 8°, 34: 5°,
55: 3°), so each block also takes one of six tones, two lightnesses times three
saturations, by ``(k - 1) mod 6``: no Fibonacci number below 144 is a multiple of 6, and
among the first 144 blocks any two whose hues are less than 14° apart differ in tone. The extension computes the same
colours (``extension/src/palette.ts``), with darker tones in JupyterLab's dark theme.

The report's palette lists the first colours (:data:`REPORT_BLOCKS`) so a reader of the
JSON sees them; :func:`colour_of` goes on past the list with the same rule.
"""

from __future__ import annotations

import colorsys
from collections.abc import Mapping
from typing import Any

__all__ = ["GOLDEN_ANGLE", "FIRST_HUE", "REPORT_BLOCKS", "TONES", "block_hsl", "block_colour", "colour_of"]

#: degrees between the hues of consecutive blocks (360 / φ², the golden angle)
GOLDEN_ANGLE = 137.50776405003785
#: the hue of block 1 (a light blue, as the explorer always began)
FIRST_HUE = 214.0
#: how many colours the report's palette lists
REPORT_BLOCKS = 12
#: how many tones block colours cycle through (two lightnesses times three saturations)
TONES = 6
_SATURATION = {False: (0.85, 0.62, 0.40), True: (0.45, 0.32, 0.20)}
_LIGHTNESS = {False: (0.915, 0.845), True: (0.21, 0.27)}


def block_hsl(k: int, *, dark: bool = False) -> tuple[float, float, float]:
    """Hue (degrees), saturation and lightness (0-1) of block ``k`` (1-based).

    >>> block_hsl(1)
    (214.0, 0.85, 0.915)
    >>> round(block_hsl(2)[0], 2), block_hsl(2)[1:]
    (351.51, (0.62, 0.845))
    """
    if k < 1:
        raise ValueError(f"block numbers start at 1, not {k}")
    hue = (FIRST_HUE + (k - 1) * GOLDEN_ANGLE) % 360.0
    tone = (k - 1) % TONES
    return hue, _SATURATION[dark][tone % 3], _LIGHTNESS[dark][tone % 2]


def block_colour(k: int, *, dark: bool = False) -> str:
    """The colour of block ``k`` (1-based) as ``#rrggbb``.

    >>> block_colour(1)
    '#d7e7fc'
    >>> len({block_colour(k) for k in range(1, 101)})   # pale colours: 8 bits a channel part some near hues
    100
    """
    hue, s, l = block_hsl(k, dark=dark)
    r, g, b = colorsys.hls_to_rgb(hue / 360.0, l, s)
    return "#" + "".join(f"{round(c * 255):02x}" for c in (r, g, b))


def colour_of(report: Mapping[str, Any], k: int) -> str:
    """Block ``k``'s (1-based) colour in ``report``: its palette's entry, then the rule above.

    >>> colour_of({"palette": {"blocks": ["#ffffff"]}}, 1), colour_of({"palette": {"blocks": ["#ffffff"]}}, 2)
    ('#ffffff', '#f0bfc6')
    """
    listed = report.get("palette", {}).get("blocks", [])
    return listed[k - 1] if 0 < k <= len(listed) else block_colour(k)
