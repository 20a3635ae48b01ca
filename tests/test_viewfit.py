"""The first view of a graph too wide to read whole (extension/src/viewfit.ts, issue 35): the
view it picks ends between nodes, never through one, and shows a whole node; checked here by a
geometry of its own on random drawings (staggered rows and aligned columns), through node."""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path

import pytest

LIB = Path(__file__).resolve().parents[1] / "extension" / "lib" / "viewfit.js"
Box = dict[str, float]

RUN = """
import { uncutView } from %s;
const cases = JSON.parse(require('fs').readFileSync(0, 'utf8'));
console.log(JSON.stringify(cases.map(c => uncutView(c.boxes, c.vw, c.vh, c.lo, c.hi))));
"""


def views(cases: list[dict]) -> list[dict | None]:
    if not LIB.exists():
        pytest.fail(f"{LIB} is missing: run `make setup`, which builds the extension")
    script = "const require = (await import('module')).createRequire(import.meta.url);\n" + RUN % json.dumps(LIB.as_uri())
    out = subprocess.run(["node", "--input-type=module", "-e", script], input=json.dumps(cases),
                         capture_output=True, text=True, check=True, timeout=60)
    return json.loads(out.stdout)


def rows(rng: random.Random) -> list[Box]:
    """Graphviz's top-to-bottom block level: rows of equal boxes, each row shifted."""
    out = []
    for r in range(rng.randint(1, 9)):
        x = rng.uniform(0, 400)
        for _ in range(rng.randint(1, 12)):
            w = rng.uniform(150, 300)
            out.append({"left": x, "right": x + w, "top": 5 + 90 * r, "bottom": 51 + 90 * r})
            x += w + rng.uniform(15, 40)
    return out


def columns(rng: random.Random) -> list[Box]:
    """Left to right: the ranks are columns, their boxes centred on one x."""
    out, x = [], 5.0
    for _ in range(rng.randint(2, 20)):
        widths = [rng.uniform(150, 300) for _ in range(rng.randint(1, 8))]
        centre = x + max(widths) / 2
        for k, w in enumerate(widths):
            out.append({"left": centre - w / 2, "right": centre + w / 2, "top": 5 + 60 * k, "bottom": 51 + 60 * k})
        x += max(widths) + rng.uniform(40, 90)
    return out


def seen(boxes: list[Box], view: dict, vw: float, vh: float) -> tuple[int, int]:
    """(nodes cut by the right edge in the visible band, nodes whole in view), in pixels."""
    s, tx, ty = view["scale"], view["tx"], view["ty"]
    px = [{"left": b["left"] * s + tx, "right": b["right"] * s + tx,
           "top": b["top"] * s + ty, "bottom": b["bottom"] * s + ty} for b in boxes]
    band = [b for b in px if b["bottom"] > 0 and b["top"] < vh]
    cut = sum(1 for b in band if b["left"] < vw - 1e-6 and b["right"] > vw + 1e-6)
    whole = sum(1 for b in px if b["left"] >= -1e-6 and b["right"] <= vw + 1e-6
                and b["top"] >= -1e-6 and b["bottom"] <= vh + 1e-6)
    return cut, whole


def test_a_chosen_view_cuts_no_node_and_shows_one_whole() -> None:
    rng = random.Random(35)
    cases = []
    for k in range(300):
        boxes = (rows if k % 2 else columns)(rng)
        cases.append({"boxes": boxes, "vw": rng.choice([548.0, 582.0, 1058.0]), "vh": rng.choice([302.0, 450.0]),
                      "lo": 0.5, "hi": 1.0})
    got = views(cases)
    found = {"rows": 0, "columns": 0}
    for k, (case, view) in enumerate(zip(cases, got)):
        if view is None:
            continue
        found["rows" if k % 2 else "columns"] += 1
        assert 0.5 - 1e-9 <= view["scale"] <= 1.0 + 1e-9
        cut, whole = seen(case["boxes"], view, case["vw"], case["vh"])
        assert cut == 0 and whole >= 1, (case, view)
    # columns can always be ended between (the reason a wide graph is drawn left to right)
    assert found["columns"] == 150, found


def test_no_view_without_nodes_and_none_through_a_node_wider_than_the_view() -> None:
    wide = [{"left": 0.0, "right": 5000.0, "top": 0.0, "bottom": 40.0}]
    assert views([{"boxes": [], "vw": 500, "vh": 300, "lo": 0.5, "hi": 1},
                  {"boxes": wide, "vw": 500, "vh": 300, "lo": 0.5, "hi": 1}]) == [None, None]


def test_a_drawing_that_starts_low_is_shown_from_its_first_nodes() -> None:
    boxes = [{"left": 900.0 + 300 * k, "right": 1100.0 + 300 * k, "top": 700.0, "bottom": 740.0} for k in range(10)]
    (view,) = views([{"boxes": boxes, "vw": 582, "vh": 302, "lo": 0.5, "hi": 1}])
    assert view is not None and seen(boxes, view, 582, 302)[1] >= 1
    assert view["ty"] < 0 and view["tx"] < 0
