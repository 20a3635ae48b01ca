"""Long batches are cut between iterations (``CaptureBudget.batch_instructions``).

A loop whose arrays are updated in every iteration and never read by Python records one
batch whose graph grows with the square of its length (pythran's gradient descent: 14 GB
at 2,000 epochs). The recorder closes the open batch once it holds ``batch_instructions``
instructions, at the start of an operation on the line where it first cut: the batches after
the first hold whole iterations and are alike. The tests check the structure (lengths,
signatures, where the cut falls) and that every cut leaves NumPy's values, replayed and
partitioned; nothing reads the clock.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fusionlab.ir.bytecode import Opcode
from fusionlab.capture import CaptureBudget, NoticeKind
from fusionlab.capture.budget import BATCH_INSTRUCTIONS
from fusionlab.partition import MergeCache, partition

from strategies import numpy_sources
from test_capture import assert_replays
from test_capture_budget import _assert_plain_numpys, _captured, _looped, _plain

DESCENT = """import numpy as np
rng = np.random.default_rng(444)
N = 64
x = np.linspace(0, 2, N)
d = 3 + 2 * x + 0.1 * rng.standard_normal(N)
f, mu = 2 / N, 0.001
y, err, w, grad = np.zeros(N), np.zeros(N), np.zeros(2), np.empty(2)
for _ in range({epochs}):
    err[:] = d - y
    grad[:] = f * np.sum(err), f * (np.dot(err, x))
    w += mu * grad
    y = w[0] + w[1] * x
"""


def test_a_long_loop_is_cut_into_alike_batches_of_whole_iterations() -> None:
    source = DESCENT.format(epochs=300)
    cap, ns = _captured(source, CaptureBudget(batch_instructions=200))
    _assert_plain_numpys(ns, _plain(source))
    lengths = [len(b) for b in cap.batches]
    assert len(lengths) >= 30 and sum(lengths) == cap.instructions
    # the first batch is cut as soon as it passes 200; the next ones at the same line
    assert 200 <= lengths[0] < 240 and all(200 <= n < 2 * 200 for n in lengths[1:-1])
    middle = {b.signature() for b in cap.batches[1:-1]}
    assert len(middle) == 1, lengths                       # whole iterations: alike
    per_epoch = (cap.instructions - lengths[0] - lengths[-1]) / (len(lengths) - 2)
    assert lengths[1] == per_epoch
    # every batch after the first starts with the line the first cut was at
    first_ops = [b.instructions[0].opcode for b in cap.batches[1:]]
    assert len(set(first_ops)) == 1
    batch_notices = [n for n in cap.notices if n.kind is NoticeKind.BATCH]
    assert len(batch_notices) == 1 and "200" in batch_notices[0].message
    # replayed and partitioned, the batches give NumPy's values; alike ones are partitioned once
    assert_replays(cap, _plain(source), "greedy")
    cache = MergeCache()
    for b in cap.batches:
        partition(b, "greedy", cache=cache)
    assert cache.misses <= 3 and cache.hits == len(cap.batches) - cache.misses


def test_without_the_cut_the_loop_is_one_batch() -> None:
    source = DESCENT.format(epochs=40)
    cap, _ = _captured(source, CaptureBudget(batch_instructions=math.inf))
    assert len(cap.batches) == 1 and len(cap.batches[0]) > 900
    assert not [n for n in cap.notices if n.kind is NoticeKind.BATCH]
    # the default cuts what is longer than BATCH_INSTRUCTIONS only
    cap, _ = _captured(source, CaptureBudget())
    assert len(cap.batches) == 1
    cap, _ = _captured(DESCENT.format(epochs=200), CaptureBudget())
    assert len(cap.batches) >= 2 and all(len(b) < 2 * BATCH_INSTRUCTIONS for b in cap.batches)


HELD = """import numpy as np
x = np.linspace(0.0, 2.0, 100)
hist = []
for _ in range(120):
    m = x > 1.0
    sel = x[m] * 0.9
    x[m] = sel
    hist.append(sel)
first, last = hist[0].copy(), hist[-1].copy()
"""


def test_values_a_list_holds_across_a_cut_are_computed() -> None:
    # At a cut the selections the list holds are live (Python may read them later), so
    # the batch before the cut computes them: one COMPRESS per iteration, in every batch.
    cap, ns = _captured(HELD, CaptureBudget(batch_instructions=100))
    plain = _plain(HELD)
    _assert_plain_numpys(ns, plain)
    assert len(cap.batches) >= 4
    assert all(np.array_equal(a, b) for a, b in zip(ns["hist"], plain["hist"], strict=True))
    held = [sum(i.opcode is Opcode.COMPRESS for i in b) for b in cap.batches]
    assert sum(held) == 120 and all(held)
    # replayed and partitioned, the held values are NumPy's (replay names them hist[k])
    got = cap.replay({k: partition(b, "greedy").blocks for k, b in enumerate(cap.batches)})
    assert "hist[119]" in got
    for name, value in got.items():
        np.testing.assert_array_equal(value, eval(name, {}, plain), err_msg=name)


def test_a_cut_never_falls_inside_an_operation() -> None:
    # x.var() records seven instructions, the overlapping x[1:] += x[:-1] a copy and the
    # update: with batches of one instruction, every batch is one whole operation
    source = ("import numpy as np\nx = np.linspace(0, 1, 7)\nfor _ in range(3):\n    v = x.var() * x\n"
              "    x[1:] += x[:-1]\n")
    cap, ns = _captured(source, CaptureBudget(batch_instructions=1))
    _assert_plain_numpys(ns, _plain(source))
    var = ["ADD_REDUCE", "DIVIDE", "SUBTRACT", "MULTIPLY", "ADD_REDUCE", "DIVIDE"]
    whole = [["RANGE"], var, ["MULTIPLY"], ["COPY", "ADD"], []]
    ops = [[i.opcode.name for i in b if i.opcode not in (Opcode.DEL, Opcode.SYNC)] for b in cap.batches]
    assert all(o in whole for o in ops) and ops.count(var) == 3, ops
    assert_replays(cap, _plain(source), "greedy")


def test_a_loop_that_leaves_the_cut_line_is_cut_by_the_gas() -> None:
    # the first cut falls in the first loop; the second loop never comes back to its line:
    # batches there are cut once twice as long
    source = ("import numpy as np\nx = np.zeros(8)\nfor _ in range(60):\n    x += 1.0\n"
              "y = np.ones(8)\nfor _ in range(400):\n    y = y * 1.001 + x\n")
    cap, ns = _captured(source, CaptureBudget(batch_instructions=50))
    _assert_plain_numpys(ns, _plain(source))
    assert len(cap.batches) >= 8 and max(len(b) for b in cap.batches) <= 2 * 50 + 4
    assert_replays(cap, _plain(source), "greedy")


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(numpy_sources(), st.integers(2, 5), st.integers(1, 40))
def test_random_loops_cut_anywhere_give_numpys_values(source: str, repeats: int, every: int) -> None:
    cell = _looped(source, repeats)
    want = _plain(cell)
    cap, ns = _captured(cell, CaptureBudget(batch_instructions=every))
    _assert_plain_numpys(ns, want)
    # the batches replayed as captured and partitioned give what the user's variables hold
    assert_replays(cap, want)
    assert_replays(cap, want, "greedy")
    uncut, _ = _captured(cell, CaptureBudget(batch_instructions=math.inf))
    assert len(cap.batches) >= len(uncut.batches)
    assert [i.opcode for b in cap.batches for i in b] == [i.opcode for b in uncut.batches for i in b]


@pytest.mark.parametrize("bad", [0, -1, 0.5])
def test_a_batch_holds_at_least_one_instruction(bad: float) -> None:
    with pytest.raises(ValueError, match="batch_instructions"):
        CaptureBudget(batch_instructions=bad)


def test_the_magic_and_the_command_line_take_the_length(tmp_path, capsys) -> None:
    from IPython.testing.globalipapp import get_ipython
    from IPython.utils.capture import capture_output

    from fusionlab.cli import main

    ip = get_ipython()
    ip.run_line_magic("load_ext", "fusionlab")
    cell = DESCENT.format(epochs=30)
    with capture_output():
        ip.run_cell_magic("fuse", "--no-explorer --batch-instructions 100", cell)
    result = ip.user_ns["_fuse"]
    assert len(result.batches) >= 5 and max(len(b) for b in result.batches) < 200
    np.testing.assert_array_equal(ip.user_ns["w"], _plain(cell)["w"])
    try:
        assert ip.run_line_magic("fuse_config", "--batch-instructions inf")["batch_instructions"] == math.inf
        with capture_output():
            ip.run_cell_magic("fuse", "--no-explorer", cell)
        assert len(ip.user_ns["_fuse"].batches) == 1
    finally:
        ip.run_line_magic("fuse_config", "--reset")
    from IPython.core.error import UsageError

    with pytest.raises(UsageError, match="--batch-instructions"):
        ip.run_cell_magic("fuse", "--batch-instructions 0", cell)
    path = tmp_path / "descent.py"
    path.write_text(cell)
    assert main(["capture", str(path), "--batch-instructions", "100"]) == 0
    out = capsys.readouterr().out
    assert "# batch 5 of" in out and "passed 100 in one batch" in out
    assert main(["verify", str(path), "--batch-instructions", "100"]) == 0
    assert main(["capture", str(path), "--batch-instructions", "0"]) == 2
