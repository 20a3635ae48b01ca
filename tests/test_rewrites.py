"""What the preparing passes report is typed records (issue 33, "decisions are types, not
text"): each :class:`~fusionlab.passes.rewrites.Rewrite` says its kind, pass, batch and
instruction, and its ``describe()`` is the line users saw before the records (the texts
below are the old prose's, printed by the code at the commit before them).

No test reads the wall clock: budgets of 0 s, or an injected clock that advances one
"second" per reading (tests/clocks.py).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from fusionlab import parse
from fusionlab.capture import capture
from fusionlab.explore.report import get_report, rewrite_notices
from fusionlab.passes.deadbases import EarlyFree, rewrites_early
from fusionlab.passes.reroll import reroll
from fusionlab.passes.rewrites import WRITE_KINDS, Rewrite, RewriteKind, RewritePass
from fusionlab.pipeline import PipelineConfig, prepare
from fusionlab.support.budget import Budget

from clocks import Ticks

#: one dead write: ``a``'s zero fill, overwritten in its middle before the SYNC reads it
RESTRICTED = "ARRAY a float64[8]\nCOPY a, 0\nCOPY a[2:5], 1.0\nSYNC a"

#: two loops rerolling folds (one per batch: the float() ends the first), and b's ones,
#: overwritten unread (a dead write in batch 1)
TWO_LOOPS = """
import numpy as np
a = np.zeros((5, 3))
r = np.arange(3.0)
for k in range(4):
    a[k + 1] += r * 2
b = np.ones(8)
b[:] = 0.5
s = float(a[1, 1])
for k in range(4):
    a[k + 1] += r * 3
"""

#: a loop rebinding its arrays: each iteration's s and z are DELed in the next batch
REBINDS = """
import numpy as np
x = np.linspace(0.0, 1.0, 64)
total = 0.0
for it in range(2):
    s = x * 2.0 + it
    z = np.sqrt(s) - x
    total += float(np.abs(z).max())
"""

REROLL_CUT_TAIL = ("the rest of the batch stays as captured (a larger --budget rerolls more; --no-reroll skips "
                   "rerolling)")


def _facts(records: Any) -> list[tuple[RewriteKind, RewritePass, int | None, int | None]]:
    return [(r.kind, r.by, r.batch, r.instruction) for r in records]


@pytest.fixture(scope="module")
def two_loops() -> Any:
    return capture(TWO_LOOPS, {})


def test_a_dead_write_restricted_is_a_record_with_its_instruction() -> None:
    got = prepare(parse(RESTRICTED), PipelineConfig())
    assert got.rerolled == () and got.cut == ()
    [r] = got.rewrites
    assert (r.kind, r.by, r.batch, r.instruction, r.base) == \
        (RewriteKind.WRITE_RESTRICTED, RewritePass.DEAD_WRITES, 0, 0, "a")
    assert r.describe() == str(r) == ("batch 1: instruction 1 (COPY a, 0) restricted to a[:-6], a[5:]: the rest is "
                                      "overwritten by instruction 2 before anything reads it")


def test_a_dead_write_removed_and_the_rerolled_loops_of_two_batches(two_loops: Any) -> None:
    got = prepare(two_loops, PipelineConfig())
    [dead] = got.rewrites
    assert (dead.kind, dead.batch, dead.instruction, dead.base) == (RewriteKind.WRITE_REMOVED, 0, 14, "b")
    assert dead.kind in WRITE_KINDS
    assert dead.describe() == ("batch 1: instruction 15 (COPY b, 1) removed: all of it is overwritten by "
                               "instruction 16 before anything reads it")
    reroll_ = RewritePass.REROLL
    assert _facts(got.rerolled) == [(RewriteKind.REROLLED, reroll_, 0, None), (RewriteKind.RUN_REROLLED, reroll_, 0, 2),
                                    (RewriteKind.REROLLED, reroll_, 1, None), (RewriteKind.RUN_REROLLED, reroll_, 1, 1)]
    assert [r.describe() for r in got.rerolled] == [
        "batch 1: rerolled: 17 instructions -> 8",
        "batch 1: 4 iterations of 3 instructions (captured 3-14) rerolled into instructions 3-5",
        "batch 2: rerolled: 16 instructions -> 7",
        "batch 2: 4 iterations of 3 instructions (captured 2-13) rerolled into instructions 2-4"]
    assert got.cut == ()


def test_one_program_rerolled_names_no_batch() -> None:
    q = parse("ARRAY x float64[3]\nCOPY x[0], 1\nCOPY x[1], 1\nCOPY x[2], 1")
    records = reroll(q).rewrites()
    assert _facts(records) == [(RewriteKind.REROLLED, RewritePass.REROLL, 0, None),
                               (RewriteKind.RUN_REROLLED, RewritePass.REROLL, 0, 0)]
    assert [r.describe() for r in records] == [
        "rerolled: 3 instructions -> 1", "3 iterations of 1 instructions (captured 1-3) rerolled into instructions 1-1"]
    # the same batch of two: numbered
    assert reroll(q).rewrites(1, 2)[0].describe() == "batch 2: rerolled: 3 instructions -> 1"


def test_a_refusal_is_counted_with_its_first_run() -> None:
    q = parse("ARRAY x float64[4]\nADD x[1], x[1], x[0]\nADD x[2], x[2], x[1]\nADD x[3], x[3], x[2]")
    [r] = reroll(q).rewrites()
    assert (r.kind, r.batch, r.instruction) == (RewriteKind.RUNS_NOT_REROLLED, 0, 0)
    assert r.describe().startswith("1 run not rerolled: an iteration reads what another iteration writes")


def test_arrays_freed_early_are_records_of_their_batch_and_last_use() -> None:
    got = prepare(capture(REBINDS, {}), PipelineConfig())
    assert [(r.kind, r.by, r.batch, r.instruction, r.base) for r in got.rewrites] == [
        (RewriteKind.FREED_EARLY, RewritePass.FREE_EARLY, 0, 4, "s"),
        (RewriteKind.FREED_EARLY, RewritePass.FREE_EARLY, 0, 7, "z")]
    assert [r.describe() for r in got.rewrites] == [
        "batch 1: s freed after instruction 5 (its next use is its DEL in batch 2): not stored unless read",
        "batch 1: z freed after instruction 8 (its next use is its DEL in batch 2): not stored unless read"]
    [one] = rewrites_early([EarlyFree("s", 0, 1, 1)], batches=2)
    assert (one.batch, one.instruction, one.base) == (0, 1, "s")


def test_a_spent_budget_cuts_both_passes(two_loops: Any) -> None:
    got = prepare(two_loops, PipelineConfig(), Budget(0.0))
    assert got.rewrites == () and got.rerolled == ()
    assert _facts(got.cut) == [(RewriteKind.BUDGET_CUT, RewritePass.DEAD_WRITES, 0, None),
                               (RewriteKind.BUDGET_CUT, RewritePass.REROLL, 0, 0)]
    assert [c.describe() for c in got.cut] == [
        "dead writes: the time budget ran out in batch 1 of 2: it and the batches after it run as captured",
        "batch 1: rerolling stopped at its time budget (its budget: 0 s) at captured instruction 1: " + REROLL_CUT_TAIL]
    one = prepare(parse(RESTRICTED), PipelineConfig(), Budget(0.0))
    assert [c.describe() for c in one.cut] == [
        "dead writes: the time budget ran out in batch 1 of 1: it runs as captured",
        "rerolling stopped at its time budget (its budget: 0 s) at captured instruction 1: " + REROLL_CUT_TAIL]


def test_a_budget_cut_in_the_second_batch_keeps_the_first_rerolled(two_loops: Any) -> None:
    # the injected clock: 9 readings reroll the first batch and stop in the second (counted, not timed)
    got = prepare(two_loops, PipelineConfig(), Budget(9.0, clock=Ticks()))
    assert [len(p) for p in got.programs] == [8, 16]
    assert _facts(got.rerolled) == [(RewriteKind.REROLLED, RewritePass.REROLL, 0, None),
                                    (RewriteKind.RUN_REROLLED, RewritePass.REROLL, 0, 2)]
    assert _facts(got.cut) == [(RewriteKind.BUDGET_CUT, RewritePass.REROLL, 1, 0),
                               (RewriteKind.BUDGET_CUT, RewritePass.DEAD_WRITES, 0, None)]
    assert [c.describe() for c in got.cut] == [
        "batch 2: rerolling stopped at its time budget (its budget: 9 s) at captured instruction 1: " + REROLL_CUT_TAIL,
        "dead writes: the time budget ran out in batch 1 of 2: it and the batches after it run as captured"]
    # 2 readings: the first dead-writes pass stops in batch 2, the one after the early frees in batch 1
    early = prepare(two_loops, PipelineConfig(), Budget(2.0, clock=Ticks()))
    assert [(c.by, c.batch) for c in early.cut] == [(RewritePass.DEAD_WRITES, 1), (RewritePass.REROLL, 0),
                                                    (RewritePass.DEAD_WRITES, 0)]
    assert early.cut[0].describe() == "dead writes: the time budget ran out in batch 2 of 2: it runs as captured"
    assert all(c.kind is RewriteKind.BUDGET_CUT for c in early.cut)


def test_the_explorer_lists_the_records_it_is_given_and_runs_no_pass() -> None:
    p = parse(RESTRICTED)
    prepared = prepare(p, PipelineConfig())
    # a record no pass would make: the notices are the records', not a pass run again
    made = Rewrite(RewriteKind.WRITE_REMOVED, 0, 0, "instruction 1 (COPY a, 0) removed: made up",
                   RewritePass.DEAD_WRITES, 1, "a")
    notices = rewrite_notices(replace(prepared, rewrites=(made,)))
    assert [n["detail"] for n in notices] == [
        "a run rewrites this batch before partitioning it: instruction 1 (COPY a, 0) removed: made up"]
    assert rewrite_notices(replace(prepared, rewrites=(made,)), batch=1) == []   # another batch's
    report = get_report(p, algorithms=["greedy"], cost_models=["bohrium"], prepared=replace(prepared, rewrites=(made,)))
    assert [n["detail"] for n in report["notices"] if n["kind"] == "rewrite"] == [n["detail"] for n in notices]
    # by default, the pipeline's records for the program: today's text
    report = get_report(p, algorithms=["greedy"], cost_models=["bohrium"])
    assert [n["detail"] for n in report["notices"] if n["kind"] == "rewrite"] == [
        "a run rewrites this batch before partitioning it: instruction 1 (COPY a, 0) restricted to a[:-6], a[5:]: "
        "the rest is overwritten by instruction 2 before anything reads it"]


def test_the_session_lists_the_pipelines_records_and_keeps_them_for_compile_and_time() -> None:
    from fusionlab.explore.jupyter.session import FuseResult

    cap = capture(REBINDS, {})
    res = FuseResult(cap.batches, capture=cap, algorithms=["greedy"], cost_models=["bohrium"], budget_seconds=30)
    res.set_batch(0)
    messages = [n["detail"] for n in res.report()["notices"] if n["kind"] == "rewrite"]
    # the batch shown is the prepared one: the notices say what was rewritten in it
    assert messages == [
        "rewritten before partitioning, as a run does: s freed after instruction 5 (its next use is its DEL in "
        "batch 2): not stored unless read",
        "rewritten before partitioning, as a run does: z freed after instruction 8 (its next use is its DEL in "
        "batch 2): not stored unless read"]
    # the prepared batches Compile & time will run are the ones listed: kept in its caches
    kept = res._pipeline.prepared.get(cap, PipelineConfig().passes)   # noqa: SLF001 -- the session's caches
    assert kept is not None and [r.base for r in kept.rewrites] == ["s", "z"]
    assert res.program.signature() == kept.programs[0].signature()   # the batch shown is the one timed
