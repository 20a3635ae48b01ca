"""The capture budget: past it, the rest of a cell runs as plain NumPy (tests never time:
they use the instruction cap, or an injected clock)."""

from __future__ import annotations

import io
import itertools
import math
import re
import textwrap
import warnings
from contextlib import redirect_stdout

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fusionlab.ir.bytecode import Opcode
from fusionlab.capture import CaptureBudget, NoticeKind, capture
from fusionlab.runtime.reference import Storage, run_reference

from strategies import numpy_sources
from test_capture_session import leaks

LOOP = "import numpy as np\nx = np.zeros(3)\nfor i in range(200):\n    x = x + 1.0\ny = x * 2\n"


def _plain(source: str) -> dict:
    ns: dict = {"__name__": "__main__"}
    with warnings.catch_warnings(), redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        exec(compile(source, "<plain>", "exec"), ns)
    return ns


def _captured(source: str, budget: CaptureBudget):
    ns: dict = {"__name__": "__main__"}
    with warnings.catch_warnings(), redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        cap = capture(source, ns, budget=budget)
    return cap, ns


def _assert_plain_numpys(ns: dict, want: dict) -> None:
    """Every user variable is plain NumPy's object: same type, same values, no stand-in."""
    for k, v in want.items():
        if k.startswith("__") or type(v).__name__ == "module":
            continue
        got = ns[k]
        assert type(got) is type(v), (k, type(got), type(v))
        assert leaks(got, path=k) == [], k
        if isinstance(v, (np.ndarray, np.generic)):
            np.testing.assert_array_equal(got, v, err_msg=k)
            assert got.dtype == v.dtype, k
        elif isinstance(v, (int, float, complex)):
            assert got == v or (got != got and v != v), k


def _replayed(cap) -> dict[str, np.ndarray]:
    """What the recorded batches SYNC, replayed by the reference executor."""
    storage = Storage(cap.inputs)
    synced: dict[str, np.ndarray] = {}
    with np.errstate(all="ignore"):
        for batch in cap.batches:
            synced.update(run_reference(batch, None, externals=cap.externals, storage=storage))
    return synced


def _looped(source: str, repeats: int) -> str:
    """``source``'s set-up, then its body repeated in a Python loop."""
    lines = source.splitlines()
    setup, body = lines[:5], lines[5:]
    return "\n".join(setup + [f"for _it in range({repeats}):"] + ["    " + b for b in body]) + "\n"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(numpy_sources(), st.integers(2, 6), st.integers(0, 80))
def test_a_cell_past_its_budget_leaves_plain_numpys_values(source: str, repeats: int, cap_at: int) -> None:
    cell = _looped(source, repeats)
    cap, ns = _captured(cell, CaptureBudget(instructions=cap_at))
    _assert_plain_numpys(ns, _plain(cell))
    if cap.stopped is not None:
        # what the user holds was computed after the program: the outputs are the prefix's
        assert set(cap.stop_values) <= set(cap.outputs) <= set(_replayed(cap))
        replay = cap.replay()
        for name, value in cap.stop_values.items():
            np.testing.assert_array_equal(replay[name], value, err_msg=name)
        # the program is the part recorded before the stop: replayed, it gives what the arrays
        # held then (a switch inside an operation's instructions would not)
        synced = _replayed(cap)
        assert set(cap.stop_values) <= set(synced) and (cap.stop_values or not cap.instructions)
        for name, value in cap.stop_values.items():
            np.testing.assert_array_equal(synced[name], value, err_msg=name)


@pytest.mark.parametrize("cap_at", range(0, 40))
def test_the_switch_waits_for_the_end_of_an_operation(cap_at: int) -> None:
    # ``x[1:] += x[:-1]`` overlaps itself: two instructions (a copy, then the update); a stop
    # between them would leave a program that replays to something NumPy never held
    cell = ("import numpy as np\nx = np.arange(6.0)\nfor i in range(8):\n    x[1:] += x[:-1]\n"
            "    y = np.mean(x) + x\n")
    cap, ns = _captured(cell, CaptureBudget(instructions=cap_at))
    _assert_plain_numpys(ns, _plain(cell))
    assert cap.stopped is not None
    synced = _replayed(cap)
    for name, value in cap.stop_values.items():
        np.testing.assert_array_equal(synced[name], value, err_msg=name)
    assert any(v.size == 6 for v in cap.stop_values.values()) or cap.instructions == 0


def test_the_notice_says_where_and_why_capture_stopped() -> None:
    cap, ns = _captured(LOOP, CaptureBudget(instructions=50))
    notice = cap.stopped
    assert notice is not None and notice.kind is NoticeKind.BUDGET and notice in cap.notices
    assert notice.line == 4  # the loop's line: the next x + 1.0 ran as plain NumPy
    got = re.search(r"capture stopped after (\d+) instructions and ([\d.]+) s \(its budget: 50 instructions\)",
                    notice.message)
    assert got is not None and 50 <= int(got[1]) <= 52, notice.message
    assert "--capture-instructions" in notice.message and "plain NumPy" in notice.message
    assert ns["x"].tolist() == [200.0] * 3 and ns["y"].tolist() == [400.0] * 3


def test_the_program_is_the_recorded_prefix() -> None:
    cap, _ = _captured(LOOP, CaptureBudget(instructions=50))
    adds = [i for i in cap.program.instructions if i.opcode is Opcode.ADD]
    assert len(adds) == cap.instructions - len([i for i in cap.program.instructions if i.opcode is not Opcode.ADD])
    assert 20 <= len(adds) <= 50 and not any(i.opcode is Opcode.MULTIPLY for i in cap.program.instructions)
    # the prefix ends with its live results SYNCed: x after len(adds) additions
    synced = _replayed(cap)
    assert [v.tolist() for v in synced.values() if v.shape == (3,)] == [[float(len(adds))] * 3]
    assert cap.instructions <= 50 + 4


def test_budget_zero_records_nothing_and_inf_records_everything() -> None:
    nothing, ns0 = _captured(LOOP, CaptureBudget(instructions=0))
    assert nothing.instructions == 0 and nothing.stopped is not None
    everything, ns1 = _captured(LOOP, CaptureBudget(seconds=math.inf, instructions=math.inf))
    unlimited, _ = _captured(LOOP, CaptureBudget())
    assert everything.stopped is None and everything.program == unlimited.program
    assert everything.instructions > 400
    want = _plain(LOOP)
    _assert_plain_numpys(ns0, want)
    _assert_plain_numpys(ns1, want)


def test_the_seconds_budget_reads_the_given_clock() -> None:
    ticks = itertools.count()
    clock = CaptureBudget(seconds=5.0, clock=lambda: float(next(ticks)), every=1)  # one second a reading
    cap, ns = _captured(LOOP, clock)
    assert cap.stopped is not None and "(its budget: 5 s)" in cap.stopped.message
    assert 2 <= cap.instructions <= 10
    _assert_plain_numpys(ns, _plain(LOOP))


def test_a_budget_is_checked() -> None:
    for bad in (-1, float("nan"), "5", True):
        with pytest.raises(ValueError, match="capture budget"):
            CaptureBudget(seconds=bad)


def test_after_the_stop_a_cells_objects_are_numpys_in_every_form() -> None:
    cell = textwrap.dedent("""\
        import numpy as np
        rng = np.random.default_rng(1)
        a = np.ones(4)
        for k in range(30):
            a = a * 1.01 + rng.random(4)
        b = a.reshape(2, 2).T
        c = a[a > 2.0]
        d = {"u": a[1:], "pairs": [[np.zeros(2) + a[0]]]}
        a[::2] = -a[1::2]
        s = a.sum()
        f = float(s)
        b.sort(axis=0)
        e = a.astype(np.float32).copy()
        r = rng.random(3)
        g = np.clip(a, 0, 1).mean()
        a += 1
        """)
    cap, ns = _captured(cell, CaptureBudget(instructions=25))
    assert cap.stopped is not None and cap.stopped.line == 5
    want = _plain(cell)
    _assert_plain_numpys(ns, want)
    assert type(ns["rng"]) is np.random.Generator
    assert ns["b"].base is not None and np.shares_memory(ns["b"], ns["a"])  # still a view, as in NumPy
    np.testing.assert_array_equal(ns["d"]["pairs"][0][0], want["d"]["pairs"][0][0])
    # the next plain cell sees NumPy's generator state
    assert ns["rng"].random() == want["rng"].random()


# -- %%fuse -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ip():
    from IPython.testing.globalipapp import get_ipython

    shell = get_ipython()
    shell.run_line_magic("load_ext", "fusionlab")
    return shell


def _fuse(ip, line: str, cell: str):
    from IPython.utils.capture import capture_output

    with capture_output() as out:
        ip.run_cell_magic("fuse", line, cell)
    return out


def test_fuse_says_it_stopped_and_explores_the_prefix(ip) -> None:
    out = _fuse(ip, "--capture-instructions 30 --no-explorer", LOOP)
    assert "fusionlab: line 4: capture stopped after" in out.stderr and "--capture-budget" in out.stderr
    want = _plain(LOOP)
    for k in ("x", "y"):
        assert type(ip.user_ns[k]) is np.ndarray and ip.user_ns[k].tolist() == want[k].tolist()
    res = ip.user_ns["_fuse"]
    assert sum(len(b) for b in res.batches) <= 34
    [notice] = [n for n in res.report()["notices"] if n["kind"] == "budget"]
    assert notice["line"] == 4 and "the program explored is the part recorded before it" in notice["message"]


def test_fuse_config_sets_the_capture_budget(ip) -> None:
    from IPython.core.error import UsageError

    try:
        conf = ip.run_line_magic("fuse_config", "--capture-instructions 0")
        assert conf["capture_instructions"] == 0
        out = _fuse(ip, "--no-explorer", LOOP)  # nothing recorded: the cell is plain NumPy's
        assert "capture stopped after 0 instructions" in out.stderr and "empty program" not in out.stderr
        assert ip.user_ns["x"].tolist() == [200.0] * 3
        with pytest.raises(UsageError, match="capture-budget"):
            ip.run_line_magic("fuse_config", "--capture-budget -1")
        with pytest.raises(UsageError, match="capture-budget"):
            _fuse(ip, "--capture-instructions -5", LOOP)
        out = _fuse(ip, "--capture-instructions inf --no-explorer", LOOP)
        assert "capture stopped" not in out.stderr
        assert sum(len(b) for b in ip.user_ns["_fuse"].batches) > 400
    finally:
        ip.run_line_magic("fuse_config", "--reset")
    assert ip.run_line_magic("fuse_config", "")["capture_instructions"] == 50_000


# -- fusionlab capture ----------------------------------------------------------------------


def test_cli_capture_takes_the_budget(capsys, tmp_path) -> None:
    import json

    from fusionlab.cli import main

    path = tmp_path / "loop.py"
    path.write_text(LOOP)
    assert main(["capture", str(path), "--capture-instructions", "30", "--format", "json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["instructions"] <= 34
    assert any(n.startswith("line 4: capture stopped after") for n in got["notices"])
    assert main(["capture", str(path), "--format", "json"]) == 0  # no limit by default
    assert json.loads(capsys.readouterr().out)["instructions"] > 400
    assert main(["capture", str(path), "--capture-budget", "-1"]) == 2
    assert "capture budget" in capsys.readouterr().err


def test_a_stopped_capture_is_run_and_checked_as_its_recorded_part() -> None:
    # the cell's plain run is not the program: run --check and Compile & time compare the
    # fused prefix with NumPy eager replaying the prefix (the reference executor)
    from fusionlab.pipeline.runner import run

    cap, ns = _captured(LOOP, CaptureBudget(instructions=30))
    r = run(cap, "greedy", "bohrium", check=True, driver="python")
    assert r.check is not None and r.check.ok and r.check.compared >= 1, r.check
    assert set(r.values) == set(cap.outputs) and r.values
    for name, value in cap.stop_values.items():
        np.testing.assert_array_equal(r.values[name], value, err_msg=name)
    assert ns["x"].tolist() == [200.0] * 3  # the user's, computed after the program
