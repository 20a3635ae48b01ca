"""Rows of a comparison whose plans are the same run the same kernels: timed once (issue 34).

Timing one plan twice measured the machine, not the cost model: the row timed first was the
slow one (2.06x against 9.34x NumPy for the same single kernel under Bohrium and Max
Contract). A row with an earlier row's plans now takes that row's times and says so.
"""

from __future__ import annotations

import io
from contextlib import redirect_stdout

from fusionlab.capture import capture
from fusionlab.pipeline import build, comparison, runner
from fusionlab.pipeline.planning import plans_key
from fusionlab.pipeline.comparison import compare, format_records
from fusionlab.pipeline.runner import run_config

from kernels import CHECKED

CHAIN = """
import numpy as np
a = np.arange(20000.0)
b = a * 2.0
c = b + 1.0
d = np.sqrt(c)
total = d.sum()
"""
MODELS = ["bohrium", "max_contract", "max_locality", "robinson"]


def _cap(source: str):
    with redirect_stdout(io.StringIO()):
        return capture(source, {})


def test_rows_with_the_same_kernels_are_timed_once() -> None:
    cap = _cap(CHAIN)
    keys = {plans_key(build(cap, run_config("greedy", m, 0, True)).plans) for m in MODELS}
    assert len(keys) == 1   # one block under every model: the same kernel
    records = compare(cap, ["greedy"], MODELS, repeat=3, min_size=0, cache=CHECKED)
    first, *others = records[1:]
    assert first.same_kernels_as == "" and not first.not_timed and len(first.samples) == 3
    for r in others:
        assert r.same_kernels_as == "greedy / bohrium" and r.warnings[0] == "same kernels as greedy / bohrium: timed once"
        assert (r.samples, r.median_seconds, r.speedup) == (first.samples, first.median_seconds, first.speedup)
        assert r.cost_model != first.cost_model and r.max_abs_error == first.max_abs_error
    # each row keeps its own cost, under its own model
    assert [r.cost for r in records[1:]] == [build(cap, run_config("greedy", m, 0, True)).planned.cost for m in MODELS]
    table = format_records(records)
    rows = table.splitlines()[2:2 + len(records)]
    assert sum(" *" in row for row in rows) == len(others) and "* greedy / robinson: the same kernels as greedy / bohrium" in table
    # the same kernels, the same interval: never called different from each other
    assert all(first.label in r.not_different for r in others) and all(r.label in first.not_different for r in others)


def test_rows_with_other_kernels_are_timed_each() -> None:
    cap = _cap(CHAIN)
    records = compare(cap, ["singleton", "greedy"], ["bohrium"], repeat=2, min_size=0, cache=CHECKED)
    assert plans_key(build(cap, run_config("singleton", "bohrium", 0, True)).plans) != \
        plans_key(build(cap, run_config("greedy", "bohrium", 0, True)).plans)
    assert [r.same_kernels_as for r in records] == ["", "", ""]
    assert records[1].samples != records[2].samples or records[1].kernels != records[2].kernels
