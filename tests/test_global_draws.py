"""A program drawing from the process-wide random streams without a seed (npbench's MLP:
``np.random.rand(N, C_in)``) is checked against a plain run that draws the same numbers."""

from __future__ import annotations

import random

import numpy as np

from fusionlab.capture import capture
from fusionlab.cli import main
from fusionlab.runtime.check import plain_namespace
from fusionlab.pipeline.runner import run

from kernels import CHECKED as CACHE   # bounds-checked kernels: this file tests a pass, not the kernels (tests/kernels.py)

SOURCE = """
import random
import numpy as np
x = np.random.rand(64, 3).astype(np.float32)
w = np.random.random_sample((3, 8))
y = np.maximum(x @ w + np.random.randn(8), 0)
k = random.random()
"""


def test_a_plain_run_leaves_the_global_streams_as_it_found_them():
    before = np.random.get_state()[1].copy(), random.getstate()
    plain_namespace(SOURCE)
    assert np.array_equal(np.random.get_state()[1], before[0]) and random.getstate() == before[1]


def test_a_capture_and_its_plain_run_draw_the_same_numbers():
    cap = capture(SOURCE)
    plain = plain_namespace(SOURCE, draws=cap.draws)
    for name in ("x", "w", "y", "k"):
        assert np.array_equal(np.asarray(cap.namespace[name]), np.asarray(plain[name])), name
    r = run(cap, "greedy", "bohrium", check=True, driver="blocks", cache=CACHE)
    assert r.check is not None and r.check.ok and r.check.compared >= 3, r.check.mismatches


def test_verify_passes_an_unseeded_program(tmp_path, capsys):
    f = tmp_path / "unseeded.py"
    f.write_text(SOURCE)
    assert main(["verify", str(f)]) == 0
    assert capsys.readouterr().out.strip().endswith("OK")


LONG_LOOP = """
import numpy as np
x = np.linspace(0, 1, 16)
total = 0.0
for i in range(3000):
    y = (x - i) ** 2
    total += float(np.sum(y))
"""


def test_verify_and_run_stop_recording_at_the_instruction_budget(tmp_path, capsys):
    # a Python loop of tiny operations: the part recorded is run and checked, the rest runs
    # as plain NumPy (as in a %%fuse cell); the user's values are plain NumPy's either way
    f = tmp_path / "long_loop.py"
    f.write_text(LONG_LOOP)
    assert main(["verify", str(f), "--capture-instructions", "600"]) == 0
    out = capsys.readouterr()
    assert out.out.strip().endswith("OK") and "the replay is checked against NumPy replaying the part recorded" in out.err
    assert main(["run", str(f), "--check", "--capture-instructions", "600", "--driver", "blocks"]) == 0
    out = capsys.readouterr()
    assert "0 differ" in out.out and "the part recorded runs fused" in out.err
