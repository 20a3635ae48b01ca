"""The timing protocol of issue 34 on real cells: the same work on both sides (random
draws timed on both or on neither; work outside the recording never turned into a
speed-up), and the intervals the rows carry. Figures are checked for their form and for
what the protocol decides, never for how fast anything ran."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from fusionlab.capture import capture
from fusionlab.capture.functions import _redraw
from fusionlab.ir.examples import fig3
from fusionlab.pipeline import comparison
from fusionlab.pipeline.comparison import Draws, compare, format_records
from fusionlab.support.intervals import overlap, ratio_interval

# a Gray-Scott from a vectorisation textbook keeps U and V as fields of a structured array:
# capture records none of the loop (a field is a plain array), NumPy's side runs all of it
STRUCTURED = """\
import numpy as np
Z = np.zeros((256, 256), [('U', float), ('V', float)])
U, V = Z['U'], Z['V']
V += 0.25
for _ in range(10):
    U += 0.5 * V + 1.0
"""
DRAWS = """\
import numpy as np
rng = np.random.default_rng(7)
x = rng.standard_normal((200, 50))
y = np.random.rand(200, 50)
z = np.exp(x - x.max(axis=1, keepdims=True)) * y
"""
PLAIN = "import numpy as np\na = np.arange(4096.0)\nb = np.sqrt(a * 2.0 + 1.0)\n"


def test_work_outside_the_recording_gets_no_speed_up() -> None:
    records = compare(capture(STRUCTURED), ["greedy"], ["bohrium"], repeat=3, min_size=0)
    numpy, row = records
    assert records.protocol["not_comparable"].startswith("not comparable: the cell's plain NumPy run takes")
    assert row.not_comparable == records.protocol["not_comparable"] and math.isnan(row.speedup)
    assert records.protocol["recorded_seconds"] < numpy.median_seconds / comparison.OUTSIDE_RATIO
    assert " n/c " in format_records(records).splitlines()[3]


def test_a_fully_recorded_cell_is_comparable() -> None:
    records = compare(capture(PLAIN), ["greedy"], ["bohrium"], repeat=3, min_size=0)
    assert records.protocol["not_comparable"] == "" and records[1].not_comparable == ""
    assert records.protocol["recorded_seconds"] is not None and math.isfinite(records[1].speedup)


def test_draws_are_timed_on_both_sides(monkeypatch: pytest.MonkeyPatch) -> None:
    cap = capture(DRAWS)
    assert len(cap.externals.redraws) == 2           # rng.standard_normal and np.random.rand
    calls: list[int] = []
    for key, draw in list(cap.externals.redraws.items()):
        def counted(draw: Any = draw, key: int = key) -> Any:
            calls.append(key)
            return draw()
        cap.externals.redraws[key] = counted
    records = compare(cap, ["greedy"], ["bohrium"], repeat=3, min_size=0)
    assert records.protocol["draws"] == Draws.BOTH.value and "timed on both sides" in records.protocol["draws_note"]
    rounds = records.protocol["rounds"] + records.protocol["warmup_rounds"]
    # every timed fused run and every run of the recorded operations draws both again
    assert len(calls) == 2 * (2 * rounds + 1) and records[1].not_comparable == ""
    assert records[1].max_abs_error <= 1e-12 and not any("differs" in w for w in records[1].warnings)


def test_a_replayed_recording_draws_on_neither_side() -> None:
    cap = capture(DRAWS)
    cap.source = ""                                 # no cell to run: NumPy's side replays the recording
    records = compare(cap, ["greedy"], ["bohrium"], repeat=2, min_size=0)
    assert records.protocol["draws"] == Draws.NEITHER.value and records.protocol["recorded_seconds"] is None
    assert compare(fig3(), ["greedy"], ["bohrium"], repeat=2, min_size=0).protocol["draws"] == Draws.NONE.value


@pytest.mark.parametrize("make, method, args, kwargs", [
    (lambda: np.random.default_rng(1), "standard_normal", ((3, 4),), {}),
    (lambda: np.random.default_rng(1), "integers", (0, 10), {"size": 7}),
    (lambda: np.random.Generator(np.random.Philox(3)), "random", (5,), {}),
    (lambda: np.random.RandomState(2), "rand", (2, 3), {}),
    (lambda: np.random.RandomState(2), "permutation", (np.arange(6),), {}),
])
def test_a_redraw_is_the_same_work_and_leaves_the_users_stream(make: Any, method: str, args: Any,
                                                                kwargs: Any) -> None:
    state = make()
    fn = getattr(state, method)
    first = fn(*args, **kwargs)
    before = (state.bit_generator.state if isinstance(state, np.random.Generator) else state.get_state(legacy=False))
    again = _redraw(fn, args, kwargs)
    assert again is not None
    got = again()
    assert got.shape == first.shape and got.dtype == first.dtype
    after = (state.bit_generator.state if isinstance(state, np.random.Generator) else state.get_state(legacy=False))
    assert str(after) == str(before)               # the user's generator never moves


def test_no_redraw_for_what_is_not_a_random_state() -> None:
    assert _redraw(np.sqrt, (1.0,), {}) is None
    assert _redraw(np.random.default_rng(0).random, (), {"out": np.empty(3)}) is None


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0.5, 2.0), min_size=1, max_size=9), st.floats(1.0, 10.0))
def test_a_constant_ratio_has_an_interval_of_one_point(times: list[float], ratio: float) -> None:
    got = ratio_interval([t * ratio for t in times], times)
    assert got.ratio == pytest.approx(ratio) and got.low == pytest.approx(ratio) and got.high == pytest.approx(ratio)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(0.1, 10.0), st.floats(0.1, 10.0)), min_size=2, max_size=12))
def test_the_interval_holds_its_ratio_and_overlap_is_symmetric(pairs: list[tuple[float, float]]) -> None:
    a, b = zip(*pairs)
    x, y = ratio_interval(a, b), ratio_interval(b, a)
    assert x.low <= x.ratio <= x.high and x.ratio == pytest.approx(float(np.median(a)) / float(np.median(b)))
    assert overlap(x, y) == overlap(y, x) and overlap(x, x)
    assert ratio_interval(a, b) == x               # seeded: the same times, the same interval


def test_unpaired_times_are_refused() -> None:
    with pytest.raises(ValueError, match="paired rounds"):
        ratio_interval([1.0, 2.0], [1.0])
