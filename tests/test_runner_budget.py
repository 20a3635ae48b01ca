""""Compile & time" under the cell's budget: the runner's rerolling and dead-writes passes
stop at the budget it is given (``run(budget=)``; ``compare`` gives them
:data:`~fusionlab.passes.reroll.REROLL_SECONDS` of its compile budget, as the explorer does), keep
what they did, run the rest as captured, say so, and the values stay plain NumPy's.

No test reads the wall clock: budgets of 0 s, or an injected clock that advances one
"second" per reading (decisions follow counted readings, not the machine's load)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from fusionlab.support.budget import Budget
from fusionlab.capture import capture
from fusionlab.pipeline import compare, run
from fusionlab.pipeline import comparison, runner
from fusionlab.pipeline.runner import run_config
from fusionlab.pipeline import prepare
from fusionlab.passes.rewrites import WRITE_KINDS, RewriteKind, RewritePass

from clocks import Ticks
from kernels import CHECKED as CACHE   # bounds-checked kernels: this file tests a pass, not the kernels (tests/kernels.py)

# two loops rerolling folds (one run each), and a dead write (b's ones, overwritten unread)
SOURCE = """
import numpy as np
a = np.zeros((41, 3))
r = np.arange(3.0)
for k in range(40):
    a[k + 1] += r * 2
s = float(a[1, 1])   # leaves the captured world: ends the first batch
for k in range(40):
    a[k + 1] += r * 3
b = np.ones(8)
b[:] = 0.5
b[:3] += a[3]
"""


def _plain() -> dict[str, Any]:
    ns: dict[str, Any] = {}
    exec(compile(SOURCE, "cell", "exec"), ns)
    return ns


def _same_as_numpy(res: runner.RunResult) -> None:
    want = _plain()
    assert res.check is not None and res.check.ok, res.check.mismatches[:3] if res.check else None
    assert np.array_equal(res.values["a"], want["a"]) and np.array_equal(res.values["b"], want["b"])
    assert res.max_abs_error == 0.0


@pytest.fixture(scope="module")
def cap() -> Any:
    return capture(SOURCE, {})


def test_run_unbudgeted_rerolls_both_loops_and_drops_the_dead_write(cap: Any) -> None:
    res = run(cap, check=True, cache=CACHE, min_size=0)
    _same_as_numpy(res)
    assert res.cut == []
    assert sum(len(b) for b in cap.batches) > 200            # 40 iterations x 3, twice, as captured
    assert sum(len(p.program) for p in res.plans) < 30       # each loop one 2-D instruction group
    assert any(r.kind in WRITE_KINDS for r in res.rewrites)


def test_run_with_a_spent_budget_runs_everything_as_captured_and_says_so(cap: Any) -> None:
    res = run(cap, check=True, cache=CACHE, min_size=0, budget=Budget(0.0))
    _same_as_numpy(res)
    # neither pass did anything: the plans' programs are the captured batches, unchanged
    assert [len(p.program) for p in res.plans] == [len(b) for b in cap.batches]
    assert res.rewrites == [] and not any(r.kind is RewriteKind.REROLLED for r in res.rerolled)
    assert [(c.kind, c.by, c.batch) for c in res.cut] == [(RewriteKind.BUDGET_CUT, RewritePass.DEAD_WRITES, 0),
                                                           (RewriteKind.BUDGET_CUT, RewritePass.REROLL, 0)]
    assert res.cut[0].describe().startswith("dead writes: the time budget ran out in batch 1 of 2")
    assert "rerolling stopped at its time budget" in res.cut[1].describe()


def test_run_cut_between_the_two_loops_keeps_the_first_rerolled(cap: Any) -> None:
    captured = [len(b) for b in cap.batches]
    # the injected clock: find the reading count at which the cut falls after the first run
    # (the passes read the clock a fixed number of times: this is counted, not timed)
    for seconds in range(1, 200):
        got = prepare(cap, run_config("greedy", "bohrium", 0, reroll=True), Budget(float(seconds), clock=Ticks()))
        lengths = [len(p) for p in got.programs]
        if got.cut and lengths[0] < captured[0] and lengths[1] >= captured[1] - 1:
            break
    else:
        pytest.fail("no budget cut between the two loops")
    res = run(cap, check=True, cache=CACHE, min_size=0, budget=Budget(float(seconds), clock=Ticks()))
    _same_as_numpy(res)
    assert [len(p.program) for p in res.plans][1] >= captured[1] - 1   # the second loop as captured
    assert len(res.plans[0].program) < captured[0] // 4                # the first rerolled
    assert all(c.kind is RewriteKind.BUDGET_CUT and "budget" in c.describe() for c in res.cut)
    assert [c.by for c in res.cut if c.by is RewritePass.REROLL] == [RewritePass.REROLL]   # said once


def test_compare_rows_reroll_within_their_share_and_warn(cap: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(comparison, "REROLL_SECONDS", 0.0)   # the share the rows give rerolling
    [numpy, row] = compare(cap, ["greedy"], ["bohrium"], repeat=1, min_size=0, cache=CACHE,
                           baseline=lambda: _plain())
    assert not row.not_timed and not row.not_checked
    assert not any("differs from plain NumPy" in w for w in row.warnings)
    assert row.max_abs_error == 0.0
    assert any("rerolling stopped at its time budget" in w for w in row.warnings)
    assert any(w.startswith("dead writes: the time budget ran out") for w in row.warnings)
