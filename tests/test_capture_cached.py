"""Cached functions (functools.lru_cache, functools.cache) called from captured code.

Their cache is C's: it must never keep a traced stand-in, so their calls run as plain
NumPy (fusionlab/capture/cached.py). Each test runs the same code plainly and under
capture and compares what the user holds, the cache's entries included (read back by
calling the cached function again after the cell)."""

from __future__ import annotations

import functools
import textwrap

import numpy as np
import pytest

from fusionlab.capture import CaptureError, NoticeKind, capture
from fusionlab.capture.cached import is_cached, names_read
from fusionlab.pipeline.runner import run

SESSION = textwrap.dedent("""
    import functools
    import numpy as np

    scale = np.full(4, 2.0)

    @functools.lru_cache(maxsize=None)
    def window(n):
        return np.hanning(n) * 2

    @functools.cache
    def scaled(k):
        return helper(k) * scale

    def helper(k):
        return np.arange(4.0) + k

    class Grid:
        def __init__(self, n):
            self.n = n

        @functools.lru_cache(maxsize=8)
        def points(self, m):
            return np.linspace(0, 1, self.n * m)
""")

CELL = textwrap.dedent("""
    x = np.linspace(0, 1, 32)
    w = window(32)
    tapered = x * w
    again = window(32)
    scale *= 3.0
    s = scaled(1)
    g = Grid(2)
    p = g.points(3) + 1
    hits = window.cache_info().hits
""")


def _session() -> dict:
    ns: dict = {}
    exec(SESSION, ns)
    return ns


def _after(ns: dict) -> dict:
    """What the user can see after the cell: names and the caches' entries."""
    return {"w": ns["w"], "again_is_w": ns["again"] is ns["w"], "tapered": ns["tapered"], "s": ns["s"],
            "p": ns["p"], "hits": ns["hits"], "scale": ns["scale"], "cached_w": ns["window"](32),
            "cached_s": ns["scaled"](1), "cached_is_w": ns["window"](32) is ns["w"],
            "types": sorted({type(v).__name__ for v in (ns["w"], ns["s"], ns["window"](32), ns["scaled"](1))})}


def test_cached_calls_keep_numpys_arrays_in_their_caches() -> None:
    plain = _session()
    exec(CELL, plain)
    captured = _session()
    capture(CELL, captured)
    want, got = _after(plain), _after(captured)
    assert got["types"] == want["types"] == ["ndarray"]
    assert got["again_is_w"] and got["cached_is_w"] and got["hits"] == want["hits"] == 1
    for key in ("w", "tapered", "s", "p", "scale", "cached_w", "cached_s"):
        np.testing.assert_array_equal(got[key], want[key])


def test_cached_calls_run_plainly_with_a_notice_and_the_rest_is_recorded() -> None:
    ns = _session()
    cap = capture(CELL, ns)
    plain = [n for n in cap.notices if n.kind is NoticeKind.PLAIN and "cached" in n.message]
    assert {n.line for n in plain} == {3, 5, 7, 9}   # window(32) twice, scaled(1), g.points(3)
    assert "window is cached (functools.lru_cache)" in plain[0].message
    ops = [ins.opcode.name for b in cap.batches for ins in b.instructions]
    # the cell's own arithmetic on recorded arrays is recorded: x * w (w an input) and
    # scale *= 3.0; ``g.points(3) + 1`` adds to an ndarray plain NumPy made: not recorded
    assert ops.count("MULTIPLY") == 2 and "ADD" not in ops and ops[0] == "RANGE"
    # the check runs the source afresh under plain NumPy: a whole session in one cell
    whole = capture(SESSION + CELL, {})
    res = run(whole, "greedy", check=True, min_size=0, driver="python")
    assert res.check.ok and res.check.compared == 3, res.check   # x, tapered, scale


def test_a_global_read_by_a_cached_function_sees_the_cells_update() -> None:
    # ``scale *= 3.0`` happened in the cell before ``scaled(1)``: the cached call reads it
    ns = _session()
    capture(CELL, ns)
    np.testing.assert_array_equal(ns["s"], (np.arange(4.0) + 1) * 6.0)


def test_a_cached_function_writing_a_global_array_is_seen_by_the_cell() -> None:
    src = textwrap.dedent("""
        import functools
        import numpy as np
        acc = np.zeros(3)

        @functools.lru_cache
        def bump(k):
            acc[:] += k
            return k
    """)
    cell = "acc += 1.0\nbump(2)\ntotal = acc * 10\n"
    plain, captured = {}, {}
    exec(src, plain)
    exec(src, captured)
    exec(cell, plain)
    capture(cell, captured)
    np.testing.assert_array_equal(captured["total"], plain["total"])
    np.testing.assert_array_equal(captured["acc"], [3.0, 3.0, 3.0])
    # the recorded program knows the call's write (the base escaped and is reloaded)
    res = run(capture(src + cell, {}), "greedy", check=True, min_size=0, driver="python")
    assert res.check.ok, res.check
    np.testing.assert_array_equal(res.values["total"], plain["total"])


def test_an_array_argument_raises_numpys_unhashable_error() -> None:
    ns = _session()
    with pytest.raises(TypeError, match="unhashable"):
        exec("window(np.ones(3))", dict(ns))
    with pytest.raises(CaptureError) as info:
        capture("a = np.ones(3)\nwindow(a)\n", ns)
    assert isinstance(info.value.original, TypeError) and "unhashable" in str(info.value.original)
    assert type(ns["a"]) is np.ndarray


def test_a_cached_function_defined_in_the_captured_cell() -> None:
    cell = textwrap.dedent("""
        import functools
        import numpy as np

        @functools.cache
        def ramp(n):
            return np.arange(n) * 0.5

        r = ramp(5) + ramp(5)
    """)
    ns: dict = {}
    capture(cell, ns)
    assert type(ns["ramp"](5)) is np.ndarray
    np.testing.assert_array_equal(ns["r"], np.arange(5) * 1.0)
    assert ns["ramp"].cache_info().hits == 2


def test_is_cached_and_names_read() -> None:
    ns = _session()
    assert is_cached(ns["window"]) and is_cached(ns["Grid"](1).points) and not is_cached(ns["helper"])
    assert is_cached(functools.lru_cache(maxsize=2)(len))
    assert {"helper", "scale", "np"} <= names_read(ns["scaled"].__wrapped__, ns)
