"""Masked assignment of selected values (issue 13): ``x[m] = f(x[m], y[m])`` is recorded as
the maps on whole arrays and one WHERE (capture/masked.py), so it fuses; everything else a
masked assignment can be stays an indexed assignment run by NumPy. Every form gives plain
NumPy's values, through the capture, its replay and the fused kernels."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fusionlab.ir.bytecode import Opcode
from fusionlab.capture import capture
from fusionlab.pipeline import run
from fusionlab.runtime.check import check_namespace, plain_namespace

# kernels bounds-checked (serial): this file tests capture of masked assignment, not the kernels' parallel loops (tests/kernels.py)
pytestmark = pytest.mark.bounds_checked


SETUP = (
    "import numpy as np\n"
    "rng = np.random.default_rng(1)\n"
    "x = rng.normal(size=5000)\n"
    "y = rng.normal(size=5000)\n"
    "k = np.arange(5000) % 7\n"
    "m = x < 0.2\n"
)


def opcodes(cap) -> list[str]:
    return [ins.opcode.name for ins in cap.program if ins.opcode not in (Opcode.DEL, Opcode.SYNC)]


def assert_numpy_values(source: str) -> None:
    """The capture's namespace, its replay and a fused run (kernels even for small
    blocks) all equal plain NumPy's."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # sqrt and log of the unselected values
        plain = plain_namespace(source)
        cap = capture(source, {})
        replayed = cap.replay()
        fused = run(cap, check=True, min_size=0).check
    names = [n for n in plain if not n.startswith("__") and n not in ("np", "rng")]
    held = check_namespace({n: cap.namespace[n] for n in names}, plain, names)
    assert held.ok, held.mismatches
    again = check_namespace(replayed, plain)
    assert again.ok and again.compared, again.mismatches
    assert fused.ok and fused.compared, fused.mismatches


REWRITTEN = {
    "negate": ("x[m] = -x[m]\n", ["NEGATIVE", "WHERE"]),
    "reflect": ("x[m] = 2.0 - x[m]\n", ["SUBTRACT", "WHERE"]),
    "in place": ("x[m] *= -0.9\n", ["MULTIPLY", "WHERE"]),
    "two arrays": ("x[m] += y[m]\n", ["ADD", "WHERE"]),
    "a chain": ("x[m] = np.sqrt(np.abs(y[m])) * x[m] + 1\n", ["ABSOLUTE", "SQRT", "MULTIPLY", "ADD", "WHERE"]),
    "cast to int": ("k[m] = x[m] * 2.5\n", ["MULTIPLY", "WHERE"]),
    "a mask from a view": ("v = x[:2500]\nn = v > 0\nv[n] = v[n] ** 2\n", ["GREATER", "POWER", "WHERE"]),
    "2-d": ("a = x.reshape(50, 100)\nb = a > 0\na[b] = np.log(a[b])\n", ["GREATER", "LOG", "WHERE"]),
    "a broadcast scalar": ("s = y.sum()\nx[m] = x[m] * s\n", ["ADD_REDUCE", "MULTIPLY", "WHERE"]),
    "a mask computed twice": ("a = x.copy()\na[a > 0] = np.sqrt(a[a > 0])\n", ["COPY", "GREATER", "SQRT", "WHERE"]),
    "a constant array": ("x[m] = np.zeros(int(m.sum()))\n", ["COPY", "WHERE"]),
}


@pytest.mark.parametrize("name", sorted(REWRITTEN))
def test_selected_values_assigned_back_become_maps_and_one_where(name):
    body, expected = REWRITTEN[name]
    source = SETUP + body
    cap = capture(source, {})
    ops = opcodes(cap)
    assert "OPAQUE" not in ops and "COMPRESS" not in ops, ops
    tail = ops[-len(expected):]
    assert tail == expected, ops
    assert_numpy_values(source)


STAYS_OPAQUE = {
    # another mask with the same count (the mask reversed)
    "another mask": "n = m[::-1]\nx[m] = y[n]\n",
    # the value is no map of a selection
    "a range": "x[m] = np.arange(int(m.sum()))\n",
    # the selection's data changed before the assignment, with no map to recompute it
    "data changed": "t = x[m]\nx[:] = 0.0\nx[m] = -t\n",
    # the mask changed before the assignment
    "mask changed": "t = -x[m]\nm[:10] = ~m[:10]\nx[m] = np.resize(t, int(m.sum()))\n",
}


@pytest.mark.parametrize("name", sorted(STAYS_OPAQUE))
def test_other_masked_assignments_run_as_numpy(name):
    source = SETUP + STAYS_OPAQUE[name]
    cap = capture(source, {})
    ops = opcodes(cap)
    assert "WHERE" not in ops[-2:], ops
    assert_numpy_values(source)


def test_data_changed_by_a_map_is_recomputed():
    # x changed after the selection, but by a recorded map: the whole-array form reads x
    # as it was then, by recomputing it from what it was made of
    source = SETUP + "z = x * 3.0\nt = z[m]\nz += 1.0\nz[m] = -t\ndel t\n"
    cap = capture(source, {})
    ops = opcodes(cap)
    assert "OPAQUE" not in ops and "COMPRESS" not in ops, ops
    assert ops[-3:] == ["MULTIPLY", "NEGATIVE", "WHERE"], ops   # z * 3.0 again, then -z
    assert_numpy_values(source)


def test_a_selection_used_elsewhere_stays_computed():
    source = SETUP + "t = -x[m]\nx[m] = t\ntotal = t.sum()\n"
    cap = capture(source, {})
    ops = opcodes(cap)
    assert ops.count("COMPRESS") == 1 and "WHERE" in ops, ops
    assert_numpy_values(source)


def test_a_wrong_length_raises_numpys_error():
    source = SETUP + "x[m] = -x[m][:-1]\n"
    with pytest.raises(Exception) as got:
        capture(source, {})
    with pytest.raises(ValueError) as want:
        plain_namespace(source)
    assert str(want.value) in str(got.value)


def test_particles_in_a_box_fuse_into_few_kernels():
    from fusionlab.workloads import ALL_WORKLOADS

    cap = capture(ALL_WORKLOADS["particles_box"].script("tiny"), {"__name__": "__main__"})
    ops = opcodes(cap)
    assert "OPAQUE" not in ops and "COMPRESS" not in ops, ops
    assert ops.count("WHERE") == 2 * 4 * 6   # 6 masked assignments per step, 4 steps, 2 iterations
    r = run(cap, check=True, min_size=0)
    assert r.check.ok and r.check.compared == 5, r.check.mismatches
    # each step's maps and masked assignments: one kernel per step (and the energy's)
    assert r.kernels <= 2 * (4 + 2), r.kernels


EXPRESSIONS = ["-{a}[m]", "2.0 - {a}[m]", "{a}[m] * {b}[m]", "np.abs({a}[m]) + 1", "np.maximum({a}[m], {b}[m])"]


@st.composite
def masked_cells(draw: st.DrawFn) -> str:
    """Statements on x and y: maps, new masks, masked assignments of selections (same or
    another mask), in-place masked updates and reads of selections."""
    lines = []
    for _ in range(draw(st.integers(1, 6))):
        a, b = draw(st.sampled_from([("x", "y"), ("y", "x"), ("x", "x")]))
        kind = draw(st.integers(0, 5))
        if kind == 0:
            lines.append(f"m = {a} {draw(st.sampled_from(['<', '>']))} {draw(st.sampled_from([-0.5, 0.0, 0.7]))}")
        elif kind == 1:
            lines.append(f"{a} = {a} * 0.5 + {b}")
        elif kind == 2:
            lines.append(f"{a}[m] {draw(st.sampled_from(['*=', '+=', '-=']))} {draw(st.sampled_from(['1.5', b + '[m]']))}")
        elif kind == 3:
            lines.append(f"t = {a}[m]")
        elif kind == 4 and any(line.startswith("t =") for line in lines):
            lines.append(f"{a}[m] = t[:int(m.sum())] if t.shape == (int(m.sum()),) else {a}[m]")
        else:
            lines.append(f"{a}[m] = " + draw(st.sampled_from(EXPRESSIONS)).format(a=a, b=b))
    return SETUP + "\n".join(lines) + "\ns = float(x.sum() + y.sum())\n"


@settings(max_examples=15, deadline=None)
@given(masked_cells())
def test_random_masked_assignments_give_numpys_values(source):
    assert_numpy_values(source)


SENSORS = """
import numpy as np

rng = np.random.default_rng(4)
channels, n = 4, 3000
data = rng.normal(0.0, 1.0, (channels, n)) + np.linspace(0.0, 2.0, n)
spikes = rng.random((channels, n)) < 0.01
data[spikes] = data[spikes] * 25.0
score = 0.0
for _ in range(3):
    mu = data.mean(axis=1, keepdims=True)
    sd = data.std(axis=1, keepdims=True)
    z = (data - mu) / sd
    out = np.abs(z) > 3.0
    data[out] = (mu + 3.0 * sd * np.sign(z))[out]      # winsorise: a selection of a temporary
    smooth = data.copy()
    smooth[:, 1:-1] = (data[:, :-2] + data[:, 1:-1] + data[:, 2:]) / 3.0
    data = smooth
    score = float(np.abs(z).max())
"""


def test_a_sensor_cleanup_in_the_usual_style_fuses_and_gives_numpys_values():
    # winsorising by a selection of a temporary (freed before the assignment: its maps
    # are recomputed), per-row mean and std with keepdims, a 3-point smoothing
    cap = capture(SENSORS, {})
    ops = opcodes(cap)
    assert "OPAQUE" not in ops and "COMPRESS" not in ops, ops
    assert ops.count("WHERE") == 1 + 3 and ops.count("SIGN") == 3
    assert_numpy_values(SENSORS)
