"""Capture's close (:meth:`fusionlab.capture.recorder.Recorder.finish`: dropping superseded
selections and their DELs, naming the bases, building the batches) does work linear in the
instructions recorded, so it is bounded by the capture budget that bounded the recording.

Counted operations, not wall time: the calls of ``Instruction.reads`` and of the
program check (``check_instruction``) made while capture closes, at n and 2n iterations.
Measured (CPU): a loop of 1,000 masked updates whose selections live on in a list freed at
the end closed in 1.65 s (3.5 million ``reads()``, four times as many per doubling); now in
0.13 s (9,002)."""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
import pytest

from fusionlab.ir import bytecode
from fusionlab.capture import CaptureBudget, capture
from fusionlab.capture import recorder

# One batch, whatever its length: the close of one batch is what is measured. Cut at
# 2,048 instructions (the default), the 400-step loop's first batch would compute the
# selections the list still holds at the cut (they are live there; plain NumPy computed
# them too), so its instruction count would not double with the steps.
ONE_BATCH = CaptureBudget(batch_instructions=math.inf)

# masked updates (their selections superseded by one WHERE) whose selections the list keeps
# alive until `del hist`: each superseded write's DEL is at the end of the batch
KEPT_SELECTIONS = """
import numpy as np
x = np.linspace(0.0, 2.0, 100)
hist = []
for _ in range(STEPS):
    m = x > 1.0
    sel = x[m] * 0.9
    x[m] = sel
    hist.append(sel)
del hist
"""
# the 100,000-iteration student cell's loop (tests/data/student_cells/inc_tiny_100k.py)
TINY_UPDATES = """
import numpy as np
x = np.zeros(10)
for i in range(STEPS):
    x += 1.0
"""


def _closing_counts(source: str, steps: int, monkeypatch: pytest.MonkeyPatch) -> tuple[dict[str, int], Any]:
    """The operations counted while capture closes ``source`` at ``steps`` iterations."""
    counts = {"reads": 0, "check_instruction": 0}
    closing = [False]
    reads, check, finish = bytecode.Instruction.reads, bytecode.check_instruction, recorder.Recorder.finish

    def counted(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            counts[name] += closing[0]
            return fn(*args, **kwargs)
        return call

    def finishing(self: recorder.Recorder) -> Any:
        closing[0] = True
        try:
            return finish(self)
        finally:
            closing[0] = False

    with monkeypatch.context() as m:
        m.setattr(bytecode.Instruction, "reads", counted("reads", reads))
        m.setattr(bytecode, "check_instruction", counted("check_instruction", check))
        m.setattr(recorder.Recorder, "finish", finishing)
        cap = capture(source.replace("STEPS", str(steps)), {}, budget=ONE_BATCH)
    return counts, cap


def _plain(source: str, steps: int) -> dict[str, Any]:
    ns: dict[str, Any] = {}
    exec(source.replace("STEPS", str(steps)), ns)
    return ns


@pytest.mark.parametrize("source, steps", [(KEPT_SELECTIONS, 200), (TINY_UPDATES, 2000)],
                         ids=["kept-selections", "tiny-updates"])
def test_capture_closes_in_work_linear_in_the_instructions(source: str, steps: int,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    small, cap_small = _closing_counts(source, steps, monkeypatch)
    large, cap_large = _closing_counts(source, 2 * steps, monkeypatch)
    n_small = sum(len(b) for b in cap_small.batches)
    n_large = sum(len(b) for b in cap_large.batches)
    assert len(cap_small.batches) == len(cap_large.batches) == 1
    assert n_small > steps and 1.9 * n_small < n_large < 2.1 * n_small
    assert small["check_instruction"] >= n_small   # the batches were built (and counted)
    for name in small:   # twice the instructions: at most twice the work, and a few per instruction
        assert large[name] <= 2 * small[name] + 8, (name, small[name], large[name])
        assert large[name] <= 4 * n_large, (name, large[name], n_large)
    # the user's values are plain NumPy's
    assert np.array_equal(cap_large.namespace["x"], _plain(source, 2 * steps)["x"])
